package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestCommandLineErrorsMatchMemcached runs memcached 1.6.45 and gocached
// with the same bad command line and compares exit status and stderr:
// gocached exits as memcached does, with its message, except for its own
// answers (cliOwnAnswers). Only command lines memcached refuses at once are
// here (not those it takes and serves with, nor those it crashes on), and
// those 1.6.18 refused that 1.6.45 takes (cliTakenSince1618);
// cmd/gocached's TestBadCommandLines has gocached's refusals of values
// memcached takes.
func TestCommandLineErrorsMatchMemcached(t *testing.T) {
	mc := referenceMemcached(t)
	gc := gocachedBinary(t)
	cases := []string{
		// getopt's errors.
		"--bogus", "--bogus=1", "-j", "-vj", "-e", "-o", "--memory-file", "--conn-limit",
		// getopt_long's abbreviations: ambiguous ones, a value where none
		// is taken, and unambiguous ones reaching the checks below.
		"--m=5", "--lis", "--liste", "--ver", "--e=1", "--ena", "--p", "--u", "--memory=8",
		"--lock=5", "--lock-memory=5", "--disable-c=1", "--conn=0", "--thr=0", "--max-r=0",
		"--napi=0", "--slab-g=1", "--ext=foo", "--listen",
		// Checks in memcached's getopt loop.
		"-c 0", "-c abc", "-c -1", "-t 0", "-t abc", "-t -2", "-f 1", "-f abc", "-f 0.5",
		"-n 0", "-n abc", "-R 0", "-R abc", "-N 0", "-N -1", "-N abc", "-D ''",
		"-o bogus", "-o bogus=1", "-o ext_bogus=1", "-o maxconns_fast,bogus",
		// Names of other memcached versions 1.6.18 does not know.
		"-o lru_segmented", "-o no_lru_segmented", "-o meta_response_old",
		"-o hashpower", "-o hashpower=", "-o hashpower=abc", "-o hashpower=11", "-o hashpower=40",
		// The item lock table, at thread start: -t 4 unless given.
		"-o hashpower=12", "-t 8 -o hashpower=13", "-t 30 -o hashpower=15", "-t 3 -o hashpower=11,hashpower=11",
		"-o hash_algorithm=foo", "-o hash_algorithm",
		"-o tail_repair_time=1", "-o tail_repair_time=abc", "-o tail_repair_time",
		"-o ext_path=/x", "-o ext_path=/x:", "-o ext_path=:64m", "-o ext_path",
		"-o ext_path=/x:64q", "-o ext_path=/x:64m:bogus", "-o ext_path=/x:64m:lowttl,ext_path=/y:9z",
		"-o ext_page_size=abc", "-o ext_path=/tmp/x:64m,ext_page_size=64", "-o ext_max_frag=x",
		"-o idle_timeout", "-o lru_crawler_sleep=-1", "-o lru_crawler_sleep=2000000", "-o lru_crawler_sleep",
		"-o lru_crawler_tocrawl=abc", "-o slab_automove=3", "-o slab_automove_ratio=2",
		"-o slab_automove_ratio", "-o slab_automove_window=1", "-o slab_automove_freeratio=x",
		"-o hot_lru_pct=90", "-o warm_lru_pct=0", "-o hot_max_factor=0", "-o warm_max_factor",
		"-o temporary_ttl", "-o watcher_logbuf_size=abc", "-o watcher_logbuf_size=-1",
		"-o worker_logbuf_size=abc", "-o read_buf_mem_limit=abc", "-o ssl_wbuf_size=x",
		"-o ssl_verify_mode=7", "-o ssl_verify_mode=abc", "-o ssl_min_version=9",
		"-o ssl_keyformat=abc", "-o ssl_chain_cert", "-o ssl_key",
		// Checks after memcached's loop, and -B.
		"-m abc", "-m 0", "-m 1", "-I 1", "-I 512", "-I abc", "-I 2g", "-I 2m -m 3",
		"-I 1025m -m 4096", "-I 2000m -m 8000", "-I 100000", "-I 1000k", "-I 256k",
		"-o slab_chunk_max=100", "-o slab_chunk_max=2097152", "-o slab_chunk_max=300000 -I 600000",
		"-o slab_sizes=abc", "-o slab_sizes=40-100", "-o slab_sizes=100-104", "-o slab_sizes=200-100",
		"-o worker_logbuf_size=16", "-o hot_lru_pct=50,warm_lru_pct=50",
		"-o temporary_ttl=5,no_lru_maintainer", "-o temporary_ttl=5,no_modern",
		"-o ext_path=/tmp/x:64m -U 5", "-o ext_path=/tmp/x:64m -I 8m",
		"-o ext_path=/tmp/x:1m", "-o ext_path=/tmp/x:64m,ext_page_size=128", "-o ext_path=/tmp/x:64m,ext_path=/tmp/y:32m",
		"-B bogus", "-B auto-negotiate", "-N 9", "-N 9 -t 8",
		"-S -B ascii", "-S -B auto", "-S -U 5", "-Y /nonexistent -B binary", "-Y /nonexistent -B auto",
		"-p 70000", "-Z",
		// Several bad flags: memcached refuses the first on the command
		// line, each occurrence with its own value; gocached's refusals of
		// garbage memcached takes (12abc, 2048x, -b 0, -m -5) come after
		// memcached's checks.
		"-c 0 -c 5", "-f abc --ver", "--ver -c 0", "-N 0 --bogus=1", "--napi-ids 0 --slab-min-size=abc",
		"-o hashpower=11 -n abc", "-o bogus -c 0", "-c 0 -o bogus", "-B auto-negotiate --bogus=1",
		"-R abc -t 0 --threads", "-o slab_automove_ratio=2 --memory-limit", "-o ssl_verify_mode=7 --lock-memory=5",
		"-t abc -I 512 --lis", "-c abc -vj", "-c 0 -V", "-t 100 -f 1", "-c 12abc -f 1", "-c 12abc -o bogus",
		"stray -c 0", "-o ext_path=/tmp/x:64m -U 5 -c 12abc", "-b 0 -p 70000", "-I 2048x", "-m -5 -I 512",
		"-t 2x -N 9", "-n -1 -o slab_sizes=200-100",
	}
	// Every command line starts with no TCP or UDP port, so nothing listens
	// on a fixed port; as root both need -u (memcached refuses root
	// without it).
	base := []string{"-p", "0", "-U", "0"}
	if os.Geteuid() == 0 {
		base = append(base, "-u", "nobody")
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			args := append([]string(nil), base...)
			for _, a := range strings.Split(c, " ") {
				if a == "''" {
					a = "" // an empty argument
				}
				args = append(args, a)
			}
			mStatus, mErr := runCLI(t, mc, args)
			gStatus, gErr := runCLI(t, gc, args)
			// getopt names the program by its argv[0].
			mErr = strings.ReplaceAll(mErr, mc+": ", "PROG: ")
			gErr = strings.ReplaceAll(gErr, gc+": ", "PROG: ")
			if own, ok := cliOwnAnswers[c]; ok {
				if mStatus != own.memcached.status || mErr != own.memcached.stderr {
					t.Errorf("%q: memcached status %d, stderr %q; want %d, %q", c, mStatus, mErr, own.memcached.status, own.memcached.stderr)
				}
				if gStatus != own.gocached.status || gErr != own.gocached.stderr {
					t.Errorf("%q (gocached's own answer):\nwant:     status %d, stderr %q\ngocached: status %d, stderr %q",
						c, own.gocached.status, own.gocached.stderr, gStatus, gErr)
				}
				return
			}
			if since, ok := cliTakenSince1618[c]; ok {
				if mStatus != -1 || gStatus != -1 {
					t.Errorf("%q (taken since memcached %s): memcached status %d, stderr %q; gocached status %d, stderr %q; want both running",
						c, since, mStatus, mErr, gStatus, gErr)
				}
				return
			}
			if mStatus <= 0 || mStatus > 125 {
				t.Fatalf("memcached %q: status %d, stderr %q: not a prompt refusal, not a case for this test", args, mStatus, mErr)
			}
			if gStatus != mStatus || gErr != mErr {
				t.Errorf("%q:\nmemcached: status %d, stderr %q\ngocached:  status %d, stderr %q", c, mStatus, mErr, gStatus, gErr)
			}
		})
	}
}

// runCLI runs bin with args for at most a few seconds and returns its
// exit status (-1 when it was still running, or died of a signal) and
// stderr.
func runCLI(t *testing.T, bin string, args []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, bin, args...)
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
	t.Fatalf("running %s %q: %v", bin, args, err)
	return 0, ""
}
