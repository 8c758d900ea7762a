package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// tapResult is what one t/*.t file reported. The files are run with perl
// directly rather than through prove so that every assertion's number and
// outcome is known: the known-failures ratchet works per assertion.
type tapResult struct {
	file     string
	planned  int    // 1..N; 0 when no plan was printed (yet)
	skipAll  string // the reason of "1..0 # SKIP ..."
	ran      int    // ok and not-ok lines
	failed   []int  // numbers of not-ok assertions (TODO ones excluded)
	desc     map[int]string
	exitCode int // perl's exit status; -1 when killed by a signal
	signal   string
	timedOut bool
	elapsed  time.Duration
	stderr   string // the tail, for diagnosis
}

// complete reports whether the file ran to its end: a skip, or its whole
// plan with Test::More's exit status (the number of failures).
func (r *tapResult) complete() bool {
	if r.timedOut || r.signal != "" {
		return false
	}
	if r.skipAll != "" {
		return r.exitCode == 0
	}
	want := len(r.failed)
	if want > 254 {
		want = 254
	}
	return r.planned > 0 && r.ran == r.planned && r.exitCode == want
}

func (r *tapResult) summary() string {
	switch {
	case r.skipAll != "":
		return "skipped: " + r.skipAll
	case r.complete():
		return fmt.Sprintf("%d/%d passed", r.ran-len(r.failed), r.planned)
	}
	why := fmt.Sprintf("exit %d", r.exitCode)
	if r.signal != "" {
		why = "killed by " + r.signal
	}
	if r.timedOut {
		why = "timed out"
	}
	return fmt.Sprintf("%d/%d passed, ran %d of plan %d (%s)", r.ran-len(r.failed), r.planned, r.ran, r.planned, why)
}

var (
	tapLine = regexp.MustCompile(`^(not )?ok (\d+)(?:\s*-?\s*(.*))?$`)
	tapPlan = regexp.MustCompile(`^1\.\.(\d+)(?:\s*#\s*(?i:skip)\S*\s*(.*))?`)
)

// parseTAP fills r from the TAP on a file's stdout.
func parseTAP(r *tapResult, out []byte) {
	r.desc = map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := tapPlan.FindStringSubmatch(line); m != nil {
			r.planned, _ = strconv.Atoi(m[1])
			if r.planned == 0 {
				r.skipAll = strings.TrimSpace(m[2])
				if r.skipAll == "" {
					r.skipAll = "no tests"
				}
			}
			continue
		}
		m := tapLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		r.ran++
		d := m[3]
		if len(d) > 80 {
			d = d[:80] + "..."
		}
		r.desc[n] = d
		if m[1] != "" && !regexp.MustCompile(`#\s*(?i:todo)`).MatchString(m[3]) {
			r.failed = append(r.failed, n)
		}
	}
}

// runTAPFile runs `perl t/<file>` in builddir as its own process group, and
// kills the whole group when it ends: a test that dies (a SIGPIPE, a croak)
// skips its handles' destructors, and the servers it started would otherwise
// live on under timedrun for its full 600 s.
func runTAPFile(ctx context.Context, builddir, file string, env []string, timeout time.Duration) *tapResult {
	r := &tapResult{file: file}
	if path, ok := tsuiteFixedPaths[file]; ok {
		// Another run holds it for one file at most: wait as long as a
		// file may take.
		lockCtx, cancel := context.WithTimeout(ctx, timeout)
		unlock, err := lockFixedPath(lockCtx, path)
		cancel()
		if err != nil {
			r.exitCode, r.stderr = -1, err.Error()
			return r
		}
		defer unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// perl runs the file with SIGPIPE at its default action, as under a
	// shell or prove: the caller may ignore SIGPIPE, and an ignored SIGPIPE
	// survives exec, turning a test that should die on a closed socket into
	// one that blocks until the timeout.
	cmd := testproc.Command("perl", "-MPOSIX", "-e", tsuiteLauncher, filepath.Join("t", file))
	cmd.Dir = builddir
	cmd.Env = append(tsuiteEnv(), env...)
	// Output goes to files, not pipes: the servers a file starts inherit its
	// stdout and stderr, and a pipe would keep Wait waiting for them.
	stdout, err := os.CreateTemp("", "tsuite-out-")
	if err != nil {
		r.exitCode, r.stderr = -1, err.Error()
		return r
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "tsuite-err-")
	if err != nil {
		r.exitCode, r.stderr = -1, err.Error()
		return r
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.exitCode, r.stderr = -1, err.Error()
		return r
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		r.timedOut = true
		syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-done
	}
	// Whatever the file left running (timedrun and its server) goes too.
	syscall.Kill(-pgid, syscall.SIGKILL)
	r.elapsed = time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.exitCode, r.signal = -1, ws.Signal().String()
		} else {
			r.exitCode = ee.ExitCode()
		}
	} else if err != nil {
		r.exitCode = -1
	}
	out, _ := os.ReadFile(stdout.Name())
	parseTAP(r, out)
	r.stderr = fileTail(stderr.Name(), 8<<10)
	return r
}

// tsuiteLauncher unblocks SIGPIPE, sets its default action and execs perl
// on the file: the Go test's threads may hold SIGPIPE blocked or ignored,
// and both survive exec.
const tsuiteLauncher = `sigprocmask(SIG_UNBLOCK, POSIX::SigSet->new(SIGPIPE)); $SIG{PIPE} = "DEFAULT"; ` +
	`exec { $^X } $^X, @ARGV or die "exec: $!"`

// tsuiteEnv is the environment of a test file: none of MemcachedTest's
// switches (an external daemon, TLS mode, valgrind) leak in from the
// caller; a run adds its own (tsuiteEngine.env).
func tsuiteEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "T_MEMD_USE_DAEMON", "SSL_TEST", "VALGRIND_TEST", "RUN_SASL_TESTS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runTAPFiles runs files with jobs at a time, longest expected first, each
// with env added to tsuiteEnv, bounded by tsuiteFileLimit or its entry in
// timeouts.
func runTAPFiles(ctx context.Context, builddir string, files []string, env []string, jobs int, timeouts map[string]time.Duration) map[string]*tapResult {
	sort.SliceStable(files, func(i, j int) bool { return tsuiteWeight(files[i]) > tsuiteWeight(files[j]) })
	results := make(map[string]*tapResult)
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for i := 0; i < jobs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				tmo := tsuiteFileLimit
				if d, ok := timeouts[f]; ok {
					tmo = d
				}
				r := runTAPFile(ctx, builddir, f, env, tmo)
				mu.Lock()
				results[f] = r
				mu.Unlock()
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	return results
}

// fileTail is the last max bytes of a file (servers log a lot under -vv).
func fileTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// parseTestList reads "3,5-7" into a set.
func parseTestList(s string) (map[int]bool, error) {
	set := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad test list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad test list %q", s)
			}
		}
		for n := a; n <= b; n++ {
			set[n] = true
		}
	}
	return set, nil
}
