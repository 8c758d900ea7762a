package idle

import (
	"fmt"
	"io"
	"strings"

	"github.com/gocached/gocached/internal/testproc"
)

// Binaries are the servers a run compares.
type Binaries struct {
	Gocached, Memcached, Memcached1618 string
}

// idleClients is how many connected clients the "clients" cases hold open:
// a server with clients that say nothing must sleep as soundly as one
// without.
const idleClients = 100

// idleItems is how many items the "items" cases store before they idle: a
// store that holds items keeps its once-a-second maintenance (as
// memcached's LRU maintainer does), an empty one need not.
const idleItems = 10000

// Cases lists what a run measures for the given targets ("epoll", "uring",
// "go", "memcached" for 1.6.45, "memcached-1.6.18"): each with its default
// flags, with idle clients connected, gocached's epoll engine and memcached
// 1.6.45 also holding items, and gocached's epoll engine also with its
// metrics endpoint and a warm-restart memory file, the features that own
// goroutines of their own.
func Cases(b Binaries, targets []string, tmpDir string) ([]Case, error) {
	var out []Case
	for _, t := range targets {
		var base testproc.Spec
		switch t {
		case "epoll", "uring", "go":
			base = testproc.Gocached(b.Gocached, t, "-l", "127.0.0.1", "-U", "0")
		case "memcached":
			base = testproc.Memcached(b.Memcached, "-l", "127.0.0.1", "-U", "0")
		case "memcached-1.6.18":
			base = testproc.Memcached(b.Memcached1618, "-l", "127.0.0.1", "-U", "0")
		default:
			return nil, fmt.Errorf("target %q: want epoll, uring, go, memcached or memcached-1.6.18", t)
		}
		base.Name = t
		out = append(out, Case{Name: t, Spec: base},
			Case{Name: fmt.Sprintf("%s, %d idle clients", t, idleClients), Spec: base, IdleConns: idleClients})
		if t == "epoll" || t == "memcached" {
			out = append(out, Case{Name: fmt.Sprintf("%s, %d items", t, idleItems), Spec: base, Items: idleItems})
		}
		if t == "epoll" {
			port, err := testproc.FreePort()
			if err != nil {
				return nil, err
			}
			out = append(out,
				Case{Name: "epoll, --metrics-listen", Spec: with(base, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", port))},
				Case{Name: "epoll, -e (warm restart file)", Spec: with(base, "-e", tmpDir+"/idle-restart.mem")})
		}
	}
	return out, nil
}

func with(s testproc.Spec, args ...string) testproc.Spec {
	s.Args = append(append([]string(nil), s.Args...), args...)
	return s
}

// WriteMarkdown prints results as a table against the targets.
func WriteMarkdown(w io.Writer, rs []Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| server | wake-ups/s | CPU %% of one core | threads (woken) | busiest thread wake-ups/s | within %d/s and %.1f %% |\n",
		MaxWakeupsPerSec, MaxCPUPct)
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rs {
		ok := "✔"
		if !r.WithinGoal {
			ok = "✘"
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.3f | %d (%d) | %.1f | %s |\n", r.Case, r.WakeupsPS, r.CPUPct, r.Threads, r.Woken, r.TopPS, ok)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
