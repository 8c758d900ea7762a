package integration

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestDifferential replays every script in diffScripts against a fresh Debian
// memcached and a fresh gocached started with the same flags, and requires
// the normalised replies to be byte-identical. The "memcached" subtest
// replays them against two memcached processes, which proves every script
// and the normalisation are deterministic.
//
// Each script runs twice per pair: written whole, and trickled a few bytes
// per write so requests arrive split at arbitrary points (scripts whose
// meaning depends on how much memcached has buffered opt out of trickling).
// GOCACHED_DIFF_SHOW=1 logs memcached's normalised replies for each script.
func TestDifferential(t *testing.T) {
	referenceMemcached(t)
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		for _, sc := range diffScripts {
			modes := []bool{false, true}
			if sc.wholeOnly {
				modes = modes[:1]
			}
			for _, trickle := range modes {
				name := sc.name
				if trickle {
					name += "/trickled"
				}
				t.Run(name, func(t *testing.T) {
					ref := startDisposable(t, referenceTarget, sc.flags...)
					var cand *testproc.Proc
					if tg.isReference() {
						cand = startDisposable(t, tg, sc.flags...)
					} else {
						cand = startServer(t, tg, sc.flags...)
					}
					var want, got []byte
					var refErr, candErr error
					var wg sync.WaitGroup
					wg.Add(2)
					go func() { defer wg.Done(); want, refErr = replay(ref.Addr(), sc, trickle) }()
					go func() { defer wg.Done(); got, candErr = replay(cand.Addr(), sc, trickle) }()
					wg.Wait()
					if refErr != nil {
						t.Fatalf("memcached: %v\nreplies so far:\n%s", refErr, quoteLines(want))
					}
					if candErr != nil {
						t.Fatalf("%s: %v\nreplies so far:\n%s", tg.name, candErr, quoteLines(got))
					}
					nw := normalise(want, nil)
					ng := normalise(got, statNames(nw))
					if os.Getenv("GOCACHED_DIFF_SHOW") == "1" {
						t.Logf("memcached replies (normalised):\n%s", quoteLines(nw))
					}
					if !bytes.Equal(nw, ng) {
						t.Errorf("replies differ (normalised); first difference at line %d\n%s", firstDiffLine(nw, ng), sideBySide(nw, ng, tg.name))
					}
				})
			}
		}
	})
}

// replay sends sc's steps over one connection, half-closes it and returns
// every byte the server sent until it closed.
func replay(addr string, sc diffScript, trickle bool) ([]byte, error) {
	// A hang guard, not a speed target: trickling a script of big values
	// takes thousands of writes, seen past 30 s on a loaded 2-CPU machine.
	c, err := dialScript(addr, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	snapshot, deadline := c.replies, c.deadline

	for i, st := range sc.steps {
		start := len(snapshot())
		req, err := expandCAS(st.send, snapshot())
		if err != nil {
			return snapshot(), fmt.Errorf("step %d: %v", i, err)
		}
		if err := writeRequest(c, req, trickle); err != nil {
			// The server may legitimately close mid-script (quit, line too long).
			break
		}
		if st.await != "" {
			for !bytes.Contains(snapshot()[start:], []byte(st.await)) {
				if time.Now().After(deadline) {
					return snapshot(), fmt.Errorf("step %d: no %q in reply", i, st.await)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		time.Sleep(st.pause)
	}
	return c.finish()
}

// writeRequest writes req whole, or trickled in writes of 1 to 7 bytes (in
// 1000-byte writes past the first 8 KiB, to keep big values quick).
func writeRequest(c io.Writer, req []byte, trickle bool) error {
	if !trickle {
		_, err := c.Write(req)
		return err
	}
	for i, n := 0, 1; len(req) > 0; i++ {
		n = 1 + i%7
		if i > 2000 {
			n = 1000
		}
		n = min(n, len(req))
		if _, err := c.Write(req[:n]); err != nil {
			return err
		}
		req = req[n:]
	}
	return nil
}

var casRef = regexp.MustCompile(`\{cas:([^}]+)\}`)

// expandCAS replaces {cas:KEY} with the cas unique of the latest
// "VALUE KEY flags bytes cas" line in the replies so far.
func expandCAS(send string, replies []byte) ([]byte, error) {
	var missing error
	s := casRef.ReplaceAllStringFunc(send, func(m string) string {
		key := casRef.FindStringSubmatch(m)[1]
		re := regexp.MustCompile(`VALUE ` + regexp.QuoteMeta(key) + ` \d+ \d+ (\d+)\r\n`)
		all := re.FindAllSubmatch(replies, -1)
		if len(all) == 0 {
			missing = fmt.Errorf("no gets reply for %q before {cas:%s}", key, key)
			return m
		}
		return string(all[len(all)-1][1])
	})
	return []byte(s), missing
}

func quoteLines(b []byte) string {
	var sb strings.Builder
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 {
			fmt.Fprintf(&sb, "  %q\n", abbreviate(string(l)))
		}
	}
	return sb.String()
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		if i >= len(la) || i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return 0
}

// sideBySide shows the lines around the first difference.
func sideBySide(want, got []byte, name string) string {
	la, lb := bytes.SplitAfter(want, []byte("\n")), bytes.SplitAfter(got, []byte("\n"))
	first := firstDiffLine(want, got) - 1
	var sb strings.Builder
	for i := max(0, first-3); i < min(max(len(la), len(lb)), first+8); i++ {
		var a, b string
		if i < len(la) {
			a = abbreviate(string(la[i]))
		}
		if i < len(lb) {
			b = abbreviate(string(lb[i]))
		}
		mark := "  "
		if a != b {
			mark = "!="
		}
		fmt.Fprintf(&sb, "%s %4d memcached %q\n        %*s %q\n", mark, i+1, a, len("memcached"), name, b)
	}
	return sb.String()
}
