package integration

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// seededScripts runs the seeded random differentials' loop: on every
// target, in parallel, scripts subtests "seed=N" from seed 1 (each
// starting and stopping its own servers), for at most 90 s plus perScript
// for each; the scripts that do not fit are left out, and said so.
// PREFIX_SCRIPTS and PREFIX_SEED in the environment change the count and
// the first seed, for a longer hunt.
func seededScripts(t *testing.T, prefix string, scripts int, perScript time.Duration, run func(t *testing.T, tg target, seed uint64)) {
	referenceMemcached(t)
	seed := uint64(1)
	if v, err := strconv.Atoi(os.Getenv(prefix + "_SCRIPTS")); err == nil && v > 0 {
		scripts = v
	}
	if v, err := strconv.ParseUint(os.Getenv(prefix+"_SEED"), 10, 64); err == nil {
		seed = v
	}
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		deadline := time.Now().Add(90*time.Second + time.Duration(scripts)*perScript)
		for i := range scripts {
			if time.Now().After(deadline) {
				// A bound on the run, not a check: on a loaded machine
				// fewer scripts fit, and each that ran has been compared.
				t.Logf("out of time after %d of %d scripts", i, scripts)
				break
			}
			s := seed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { run(t, tg, s) })
		}
	})
}

// diffTLS (GOCACHED_DIFF_TLS=1) runs the seeded differentials over TLS:
// both servers get -Z with a throwaway certificate and every script is
// replayed through a TLS client (the go engine only: -Z runs it).
var diffTLS = os.Getenv("GOCACHED_DIFF_TLS") == "1"

// replayPair starts a fresh memcached and a fresh tg with flags, replays
// one script against both at once (replay writes it to a server's address
// and returns the replies) and returns both reply streams normalised. On
// a replay error it says whose, with the replies so far.
func replayPair(t *testing.T, tg target, flags []string, replay func(addr string) ([]byte, error), normalise func([]byte) []byte) (want, got []byte, err error) {
	t.Helper()
	if diffTLS {
		if !tg.isReference() && tg.engine != "go" {
			t.Skipf("GOCACHED_DIFF_TLS: TLS is served by the go engine only")
		}
		cert, key, _ := writeTestCert(t)
		flags = append(append([]string(nil), flags...), "-Z", "-o", "ssl_chain_cert="+cert+",ssl_key="+key)
	}
	ref := startDisposable(t, referenceTarget, flags...)
	cand := startDisposable(t, tg, flags...)
	if diffTLS {
		tlsDiffAddrs.Store(ref.Addr(), true)
		tlsDiffAddrs.Store(cand.Addr(), true)
		t.Cleanup(func() { tlsDiffAddrs.Delete(ref.Addr()); tlsDiffAddrs.Delete(cand.Addr()) })
	}
	var refErr, candErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); want, refErr = replay(ref.Addr()) }()
	go func() { defer wg.Done(); got, candErr = replay(cand.Addr()) }()
	wg.Wait()
	if refErr != nil {
		return nil, nil, fmt.Errorf("memcached: %w\nreplies so far:\n%s", refErr, normalise(want))
	}
	if candErr != nil {
		return nil, nil, fmt.Errorf("%s: %w\nreplies so far:\n%s", tg.name, candErr, normalise(got))
	}
	return normalise(want), normalise(got), nil
}
