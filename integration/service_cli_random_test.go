package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestRandomCommandLinesMatchMemcached is TestCommandLineErrorsMatchMemcached
// with command lines drawn at random from a fixed seed: one to four of
// memcached's flags, short and long, getopt_long abbreviations, clusters
// of short options, -o lists, good and bad values. memcached runs first;
// a line it refuses (it exits on its own, status 1 to 125, within a short
// bound) must be refused by gocached with the same status and stderr. A
// line memcached starts with is skipped: gocached may refuse it (garbage
// memcached takes, see cmd/gocached's TestBadCommandLines) or start too.
//
// GOCACHED_CLIRAND_SEED and GOCACHED_CLIRAND_N pick other lines, to hunt
// longer.
func TestRandomCommandLinesMatchMemcached(t *testing.T) {
	mc := referenceMemcached(t)
	gc := gocachedBinary(t)
	seed, n := int64(1), 300
	if s := os.Getenv("GOCACHED_CLIRAND_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("GOCACHED_CLIRAND_SEED: %v", err)
		}
		seed = v
	}
	if s := os.Getenv("GOCACHED_CLIRAND_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("GOCACHED_CLIRAND_N %q: want a positive count", s)
		}
		n = v
	}
	// As TestCommandLineErrorsMatchMemcached: no TCP or UDP port, and -u
	// as root. The generator never names a port memcached would listen on.
	base := []string{"-p", "0", "-U", "0"}
	if os.Geteuid() == 0 {
		base = append(base, "-u", "nobody")
	}
	// -Y names a file both read at start: a good one, so that a line
	// with -Y reaches the checks after it.
	// memcached reads it after it drops root for -u nobody.
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth")
	if err := os.WriteFile(authFile, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewSource(seed))
	lines := make([][]string, n)
	for i := range lines {
		lines[i] = randomCommandLine(rng)
		for j, a := range lines[i] {
			lines[i][j] = strings.ReplaceAll(a, authFilePlaceholder, authFile)
		}
	}

	// Lines memcached starts with run until the bound, so several run at
	// once; the whole run has a time budget too.
	const workers = 16
	deadline := time.Now().Add(45 * time.Second)
	type result struct {
		compared, skipped bool
		diff              string
	}
	results := make([]result, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				args := append(append([]string(nil), base...), lines[i]...)
				mStatus, mErr := runCLIBounded(t, mc, args, 1500*time.Millisecond)
				if mStatus <= 0 || mStatus > 125 || startFailure(mErr) {
					results[i].skipped = true // started, or died of a signal
					continue
				}
				gStatus, gErr := runCLIBounded(t, gc, args, 3*time.Second)
				mErr = strings.ReplaceAll(mErr, mc+": ", "PROG: ")
				gErr = strings.ReplaceAll(gErr, gc+": ", "PROG: ")
				results[i].compared = true
				if gStatus != mStatus || gErr != mErr {
					results[i].diff = fmt.Sprintf("%s:\nmemcached: status %d, stderr %q\ngocached:  status %d, stderr %q",
						quoteArgs(lines[i]), mStatus, mErr, gStatus, gErr)
				}
			}
		}()
	}
	sent := 0
	for ; sent < n && time.Now().Before(deadline); sent++ {
		next <- sent
	}
	close(next)
	wg.Wait()
	compared, skipped := 0, 0
	for _, r := range results[:sent] {
		switch {
		case r.compared:
			compared++
		case r.skipped:
			skipped++
		}
		if r.diff != "" {
			t.Error(r.diff)
		}
	}
	t.Logf("seed %d: %d of %d lines run, %d compared (refused by memcached), %d skipped (memcached started or crashed)",
		seed, sent, n, compared, skipped)
	if sent < n {
		t.Logf("time budget spent after %d lines", sent)
	}
}

// runCLIBounded runs bin with args for at most bound and returns its exit
// status (-1 when it was still running and was killed, or died of a
// signal) and stderr. The process is always ended and waited for.
func runCLIBounded(t *testing.T, bin string, args []string, bound time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := testproc.CommandContext(ctx, bin, args...) // killed by its pid at the bound
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return -1, stderr.String()
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Errorf("running %s %q: %v", bin, args, err)
	return -1, ""
}

// startFailure reports whether memcached's stderr is a failure to start
// after it took its command line, not a refusal of the command line: its
// SASL library has no configuration here (gocached prints the same line,
// then says what it looked for in its own words), -L's preallocation
// needs more than -m, and -k's mlockall fails under a small
// RLIMIT_MEMLOCK (memcached warns and goes on, before some of its checks
// after the loop).
func startFailure(stderr string) bool {
	for _, s := range []string{"Error initializing sasl.", "Could not open authfile",
		"Error while preallocating slab memory", "mlockall() failed", "Too many open files"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

const authFilePlaceholder = "AUTHFILE"

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " '\"") {
			q[i] = strconv.Quote(a)
		}
	}
	return strings.Join(q, " ")
}

// cliFlag is one of memcached's options for the generator: its short and
// long names and values to draw from (nil: it takes none).
type cliFlag struct {
	short, long string
	values      []string
}

// cliFlags are memcached 1.6.18's options, without those that would leave
// something behind: -d (daemon), -s (a socket file), -P and -e (files),
// -a (with no socket it is moot), -u (in the base as root), and ports
// other than 0 and 70000 (refused after the loop), so nothing listens on
// a fixed port. -n and -R take no negative (memcached 1.6.45 refuses it,
// 1.6.18 started with it): "-0" keeps the sign in play.
var cliFlags = []cliFlag{
	{"c", "conn-limit", []string{"0", "-1", "abc", "200", "1024", "200abc"}}, // -c 5: too few files for libevent
	{"t", "threads", []string{"0", "abc", "-2", "4", "2", "100", " 3", "2x", "+2"}},
	{"f", "slab-growth-factor", []string{"1", "abc", "0.5", "1.25", "2", "1.5x", "1e0", "-3"}},
	{"n", "slab-min-size", []string{"0", "abc", "48", "100", "48abc", "-0", "1"}},
	{"R", "max-reqs-per-event", []string{"0", "abc", "20", "5", "5abc", "-0"}},
	{"N", "napi-ids", []string{"0", "-1", "abc", "1", "2", "9", "1abc", "5"}},
	{"D", "", []string{"", ":", "/"}}, // no long name in memcached (--delimiter is gocached's)
	// -m with a g suffix is left out: gocached reads gigabytes where
	// memcached's atoi reads megabytes (-m 1g is refused by memcached).
	{"m", "memory-limit", []string{"abc", "0", "1", "3", "64", "4096", "64m", "-5", "2x"}},
	{"I", "max-item-size", []string{"1", "512", "abc", "2g", "2m", "1m", "1000k", "256k", "100000", "1025m", "2M", "1K", "-5", "1024k", "x"}},
	{"B", "protocol", []string{"bogus", "auto", "ascii", "binary", "auto-negotiate"}},
	{"p", "port", []string{"0", "70000"}},
	{"U", "udp-port", []string{"0"}},
	{"l", "listen", []string{"127.0.0.1"}},
	{"b", "listen-backlog", []string{"1024", "0"}},
	{"Y", "auth-file", []string{authFilePlaceholder}},
	{"o", "extended", nil}, // values from randomSuboptions
	{"v", "verbose", nil}, {"k", "lock-memory", nil}, {"r", "enable-coredumps", nil},
	{"M", "disable-evictions", nil}, {"C", "disable-cas", nil}, {"S", "enable-sasl", nil},
	{"F", "disable-flush-all", nil}, {"X", "disable-dumping", nil}, {"W", "disable-watch", nil},
	{"A", "enable-shutdown", nil}, {"L", "enable-largepages", nil}, {"Z", "enable-ssl", nil},
}

// cliSuboptions are -o suboptions, good and bad. Left out: slab_chunk_max
// with a value that is not a number or is 0 (memcached prints its message,
// goes on and dies of SIGFPE; gocached refuses it at once, see the README),
// and above 1024, which gocached reads as bytes where memcached 1.6.24 and
// later refuse it (TestCommandLineErrorsMatchMemcached's cliOwnAnswers).
var cliSuboptions = []string{
	"bogus", "bogus=1", "ext_bogus=1", "maxconns_fast", "hashpower", "hashpower=", "hashpower=abc",
	"hashpower=11", "hashpower=20", "hashpower=40", "hash_algorithm=foo", "hash_algorithm=murmur3",
	"hash_algorithm", "tail_repair_time=1", "tail_repair_time", "ext_path=/x", "ext_path=/tmp/x:64m",
	"ext_path", "ext_page_size=abc", "ext_max_frag=x", "idle_timeout",
	"idle_timeout=10", "lru_crawler_sleep=-1", "lru_crawler_sleep=2000000", "lru_crawler_sleep",
	"lru_crawler_tocrawl=abc", "slab_automove=3", "slab_automove=1", "slab_automove_ratio=2",
	"slab_automove_ratio", "slab_automove_window=5", "slab_automove_freeratio=x", "hot_lru_pct=90",
	"hot_lru_pct=50", "warm_lru_pct=0", "warm_lru_pct=50", "hot_max_factor=0", "warm_max_factor",
	"temporary_ttl", "temporary_ttl=5", "no_lru_maintainer", "no_modern", "modern",
	"watcher_logbuf_size=abc", "worker_logbuf_size=abc", "read_buf_mem_limit=abc", "ssl_wbuf_size=x",
	"ssl_verify_mode=7", "ssl_min_version=9", "ssl_chain_cert", "ssl_key",
	"slab_sizes=abc", "slab_sizes=40-100", "slab_sizes=100-104", "slab_sizes=200-100", "no_chunked_items",
	"slab_chunk_max=16", "slab_chunk_max=100", "slab_chunk_max=1024", "slab_automove_window=1",
	"worker_logbuf_size=16", "ext_page_size=64",
}

func randomSuboptions(rng *rand.Rand) string {
	k := 1 + rng.Intn(3)
	items := make([]string, k)
	for i := range items {
		items[i] = cliSuboptions[rng.Intn(len(cliSuboptions))]
	}
	return strings.Join(items, ",")
}

// cliOddities are arguments no flag table yields: unknown options, and
// pairs that only mean something together. Left out: -h (memcached 1.6.18
// given -U with a port and -h prints half its usage and exits 1), and
// -t auto (gocached's own value: memcached's atoi reads 0 and refuses it).
var cliOddities = [][]string{
	{"--bogus"}, {"--bogus=1"}, {"-j"}, {"-vj"}, {"--ver"}, {"--p"}, {"--lis"}, {"--e=1"},
	{"-S", "-U", "5"}, {"-Y", authFilePlaceholder, "-U", "5"}, {"-o", "ext_path=/tmp/x:64m", "-U", "5"},
	{"--lock-memory=5"}, {"--verbose=2"}, {"-V"}, {"stray"}, {"--"}, {"-b", "abc"},
	{"-o", "inline_ascii_resp"}, {"-I", "2048x"}, {"-m", "-5"},
}

// randomCommandLine is one to four options, each spelled one of the ways
// getopt_long reads it.
func randomCommandLine(rng *rand.Rand) []string {
	var args []string
	k := 1 + rng.Intn(4)
	for i := 0; i < k; i++ {
		if rng.Intn(12) == 0 {
			args = append(args, cliOddities[rng.Intn(len(cliOddities))]...)
			continue
		}
		f := cliFlags[rng.Intn(len(cliFlags))]
		args = append(args, randomOption(rng, f)...)
	}
	// Now and then an option that wants a value comes last, without one.
	if rng.Intn(15) == 0 {
		f := cliFlags[rng.Intn(16)]
		if rng.Intn(2) == 0 || f.long == "" {
			args = append(args, "-"+f.short)
		} else {
			args = append(args, "--"+f.long)
		}
	}
	return args
}

func randomOption(rng *rand.Rand, f cliFlag) []string {
	value := ""
	switch {
	case f.short == "o":
		value = randomSuboptions(rng)
	case f.values != nil:
		value = f.values[rng.Intn(len(f.values))]
	}
	if f.values == nil && f.short != "o" {
		// A cluster of options without values, maybe ending with one that
		// takes the next argument, or long spellings.
		switch rng.Intn(4) {
		case 0:
			return []string{"--" + longPrefix(rng, f.long)}
		case 1:
			c := "-" + f.short
			for j := rng.Intn(3); j > 0; j-- {
				c += cliFlags[16+rng.Intn(len(cliFlags)-16)].short
			}
			if rng.Intn(3) == 0 {
				g := cliFlags[rng.Intn(15)]
				return []string{c + g.short, g.values[rng.Intn(len(g.values))]}
			}
			return []string{c}
		}
		return []string{"-" + f.short}
	}
	form := rng.Intn(5)
	if f.long == "" {
		form = 2 + rng.Intn(3)
	}
	switch form {
	case 0:
		return []string{"--" + longPrefix(rng, f.long) + "=" + value}
	case 1:
		return []string{"--" + longPrefix(rng, f.long), value}
	case 2:
		if value != "" {
			return []string{"-" + f.short + value}
		}
	}
	return []string{"-" + f.short, value}
}

// longPrefix is the long name, or, one time in three, a prefix of it
// getopt_long may take as an abbreviation (or find ambiguous).
func longPrefix(rng *rand.Rand, long string) string {
	if rng.Intn(3) != 0 {
		return long
	}
	return long[:1+rng.Intn(len(long))]
}
