package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// startMemcached runs Debian's memcached on a free loopback port for the
// test and stops it (by pid) afterwards.
func startMemcached(t *testing.T) string {
	t.Helper()
	bin, err := testproc.MemcachedBinary()
	if err != nil {
		if testproc.Required() {
			t.Fatalf("%v (%s=1)", err, testproc.RequireEnv)
		}
		t.Skipf("no reference memcached: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := testproc.StartOnFreePort(ctx, testproc.Memcached(bin, "-l", "127.0.0.1", "-U", "0", "-t", "1"))
	if err != nil {
		t.Fatal(err)
	}
	// Killed: its shutdown is not under test and SIGTERM costs memcached a second.
	t.Cleanup(func() {
		if err := p.Kill(); err != nil {
			t.Error(err)
		}
	})
	return p.Addr()
}

// The tool's rate at a target must hold within 1% against the reference
// server, as mutilate's does.
func TestMemcachedTargetRate(t *testing.T) {
	addr := startMemcached(t)
	forEachEngine(t, func(t *testing.T, engine string) {
		tests := []struct {
			name    string
			ia      Distribution
			rateTol float64
		}{
			{"fixed", Fixed{Value: 1}, 0.01},
			// A Poisson window of 15000 requests: 5 standard deviations is 4%.
			{"exponential", Exponential{Rate: 1}, 5 / math.Sqrt(15000)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cfg := testConfig(addr)
				cfg.QPS, cfg.InterArrival = 5000, tt.ia
				cfg.Time, cfg.Warmup = 3*time.Second, 500*time.Millisecond
				cfg.KeySize, cfg.ValueSize, cfg.Update = FBKey, FBValue{}, 0.03
				cfg.Records, cfg.Depth = 10000, 4
				r := run(t, cfg)
				checkConsistent(t, r)
				late := lateness(r)
				if math.Abs(r.QPS-cfg.QPS) > (tt.rateTol+late)*cfg.QPS {
					t.Errorf("achieved %.1f req/s at a target of %.0f (lateness %.2f%%)", r.QPS, cfg.QPS, 100*late)
				}
				// Whatever the schedule offered, memcached answers all of it,
				// but for what the machine's delays push out of the interval.
				if math.Abs(r.QPS-r.OfferedQPS) > (0.01+late)*r.OfferedQPS || r.Errors != 0 {
					t.Errorf("achieved %.1f of %.1f offered, %d errors (%v)", r.QPS, r.OfferedQPS, r.Errors, r.ConnErrors)
				}
				if r.Misses != 0 || r.Load == nil || r.Load.Errors != 0 {
					t.Errorf("after a preload of %d: misses %d, load %+v", cfg.Records, r.Misses, r.Load)
				}
			})
		}
	})
}

func TestMemcachedMissesAndErrors(t *testing.T) {
	addr := startMemcached(t)
	cfg := testConfig(addr)
	cfg.NoLoad, cfg.Time = true, 500*time.Millisecond
	cfg.Records = 1 << 20 // untouched keys
	r := run(t, cfg)
	checkConsistent(t, r)
	if r.Gets == 0 || r.Misses != r.Gets || r.Errors != 0 {
		t.Errorf("gets of unloaded keys: gets %d misses %d errors %d", r.Gets, r.Misses, r.Errors)
	}

	// memcached's item limit is 1 MiB including the header: a 1 MiB value is refused.
	cfg.Update, cfg.ValueSize, cfg.MaxValue = 1, Fixed{Value: 1 << 20}, 1<<20
	cfg.Records = 100
	r = run(t, cfg)
	checkConsistent(t, r)
	if r.Sets == 0 || r.ErrReplies != r.Sets || r.Errors != r.Sets {
		t.Errorf("oversized sets: sets %d error replies %d errors %d", r.Sets, r.ErrReplies, r.Errors)
	}
}

func TestMemcachedClosedLoop(t *testing.T) {
	addr := startMemcached(t)
	cfg := testConfig(addr)
	cfg.Time, cfg.Depth, cfg.Connections = time.Second, 4, 2
	cfg.KeySize, cfg.ValueSize, cfg.Update = FBKey, FBValue{}, 0.03
	r := run(t, cfg)
	checkConsistent(t, r)
	if r.Requests < 1000 || r.Errors != 0 || r.Misses != 0 {
		t.Errorf("closed loop: requests %d errors %d misses %d", r.Requests, r.Errors, r.Misses)
	}
	t.Logf("closed loop, 2 conns x depth 4: %.0f req/s, p99 %.0fµs", r.QPS, r.Latency.P99)
}

// Multigets against the reference server, in both engines: every reply
// parses (no errors), preloaded keys hit, and unloaded ones miss.
func TestMemcachedMultiGet(t *testing.T) {
	addr := startMemcached(t)
	forEachEngine(t, func(t *testing.T, engine string) {
		cfg := testConfig(addr)
		cfg.Time, cfg.Depth, cfg.Connections, cfg.MultiGet = time.Second, 4, 2, 16
		cfg.KeySize, cfg.ValueSize, cfg.Records = FBKey, FBValue{}, 5000
		r := run(t, cfg)
		checkConsistent(t, r)
		if r.Requests < 500 || r.Errors != 0 || r.Misses != 0 || r.Hits != r.Gets {
			t.Errorf("multiget of 16: requests %d errors %d (%v) hits %d of %d gets", r.Requests, r.Errors, r.ConnErrors, r.Hits, r.Gets)
		}
		// A fresh server: none of the 16 keys can hit.
		cfg.Server, cfg.NoLoad = startMemcached(t), true
		r = run(t, cfg)
		checkConsistent(t, r)
		if r.Gets == 0 || r.Misses != r.Gets || r.Errors != 0 {
			t.Errorf("multiget of unloaded keys: gets %d misses %d errors %d", r.Gets, r.Misses, r.Errors)
		}
	})
}
