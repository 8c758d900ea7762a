package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// engines lists the load engines this platform has.
func engines() []string {
	if haveEpoll {
		return []string{EngineEpoll, EngineGo}
	}
	return []string{EngineGo}
}

// forEachEngine runs f once per engine; f builds configs with testConfig,
// which the engine name reaches through currentEngine.
func forEachEngine(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range engines() {
		t.Run(e, func(t *testing.T) {
			currentEngine = e
			f(t, e)
		})
	}
}

// currentEngine is the engine testConfig selects (tests here run serially).
var currentEngine string

func testConfig(addr string) Config {
	cfg := DefaultConfig()
	cfg.Engine = currentEngine
	cfg.Server = addr
	cfg.Time = time.Second
	cfg.Records = 1000
	cfg.Seed = 42
	cfg.DrainTimeout = time.Second
	return cfg
}

func run(t *testing.T, cfg Config) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// checkConsistent asserts the invariants every result must satisfy.
func checkConsistent(t *testing.T, r *Result) {
	t.Helper()
	if r.Requests != r.Gets+r.Sets || r.Hits+r.Misses > r.Gets || r.Latency.Count != r.Requests {
		t.Errorf("inconsistent counts: %+v", r)
	}
	if r.Requests > 0 && !(r.Latency.Min <= r.Latency.P50 && r.Latency.P50 <= r.Latency.P99 && r.Latency.P99 <= r.Latency.Max) {
		t.Errorf("latency quantiles out of order: %+v", r.Latency)
	}
}

// lateness is the share of a run's interval that the machine's delays can
// explain of a rate shortfall: requests sent late by up to the longest send
// lag, and replies still in flight at the interval's end for up to the p99
// latency, fall out of the interval. On an idle machine it is a fraction of
// a percent; on a loaded one (a CPU hog beside the test) it grows with the
// delays the run measured, and only a shortfall beyond it is the tool's.
func lateness(r *Result) float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return (r.SendLag.Max + r.Latency.P99) / 1e6 / r.Seconds
}

func TestOpenLoopRate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, nil)
		tests := []struct {
			name       string
			ia         Distribution
			qps        float64
			conns, thr int
			rateTol    float64 // achieved vs target, relative
		}{
			{"fixed one conn", Fixed{Value: 1}, 2000, 1, 1, 0.01},
			{"fixed 2x2 conns", Fixed{Value: 1}, 3000, 2, 2, 0.01},
			// Poisson counts vary: 5 standard deviations of a 3000-request window.
			{"exponential", Exponential{Rate: 1}, 3000, 2, 1, 5 / math.Sqrt(3000)},
			{"fb_ia", FBIA, 3000, 1, 1, 0.1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cfg := testConfig(srv.addr())
				cfg.QPS, cfg.InterArrival, cfg.Connections, cfg.Threads = tt.qps, tt.ia, tt.conns, tt.thr
				cfg.Warmup = 200 * time.Millisecond
				cfg.Depth = 8
				cfg.Update = 0.1
				r := run(t, cfg)
				checkConsistent(t, r)
				if tol := tt.rateTol + lateness(r); math.Abs(r.QPS-tt.qps) > tol*tt.qps {
					t.Errorf("achieved %.1f req/s, target %.0f (tolerance %.1f%% with the run's lateness)", r.QPS, tt.qps, 100*tol)
				}
				if r.Requests != int64(math.Round(r.OfferedQPS*r.Seconds)) || r.Errors != 0 || r.Unsent != 0 {
					t.Errorf("requests %d, offered %.0f, errors %d, unsent %d: every scheduled request should be answered",
						r.Requests, r.OfferedQPS*r.Seconds, r.Errors, r.Unsent)
				}
				if r.Sets == 0 || r.SendLag.Count == 0 {
					t.Errorf("sets %d, send-lag samples %d", r.Sets, r.SendLag.Count)
				}
			})
		}
	})
}

// A server stall must show in the latency of every request scheduled
// during it, not just the one in flight (no coordinated omission).
func TestOpenLoopStallShowsInLatency(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, func(s *fakeServer) { s.stallAt, s.stallFor = 400*time.Millisecond, 300*time.Millisecond })
		cfg := testConfig(srv.addr())
		cfg.NoLoad = true
		cfg.QPS, cfg.InterArrival = 1000, Fixed{Value: 1}
		cfg.Time = 1500 * time.Millisecond
		r := run(t, cfg)
		checkConsistent(t, r)
		// 300 of the 1500 requests are scheduled inside the stall and wait
		// between 0 and 300 ms; more than 10% of all wait over 50 ms.
		if r.Latency.P90 < 50e3 {
			t.Errorf("p90 latency %.0fµs through a 300ms stall; requests delayed behind it went uncounted", r.Latency.P90)
		}
		if r.Unsent != 0 || r.Unanswered != 0 {
			t.Errorf("unsent %d, unanswered %d", r.Unsent, r.Unanswered)
		}
	})
}

func TestMissesHitsAndPreload(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, nil)
		cfg := testConfig(srv.addr())
		cfg.NoLoad = true
		cfg.Time = 300 * time.Millisecond
		r := run(t, cfg)
		checkConsistent(t, r)
		if r.Gets == 0 || r.Misses != r.Gets || r.Hits != 0 {
			t.Errorf("against an empty server: gets %d hits %d misses %d", r.Gets, r.Hits, r.Misses)
		}

		cfg.NoLoad, cfg.LoadOnly = false, true
		cfg.ValueSize = FBValue{}
		cfg.KeySize = FBKey
		r = run(t, cfg)
		if r.Load == nil || r.Load.Records != cfg.Records || r.Load.Errors != 0 || r.Requests != 0 {
			t.Fatalf("load only: %+v load %+v", r, r.Load)
		}
		srv.mu.Lock()
		stored := len(srv.items)
		srv.mu.Unlock()
		if stored != cfg.Records {
			t.Errorf("server holds %d items after loading %d records", stored, cfg.Records)
		}

		cfg.LoadOnly, cfg.NoLoad = false, true
		cfg.Depth = 4
		r = run(t, cfg)
		checkConsistent(t, r)
		if r.Gets == 0 || r.Hits != r.Gets || r.Misses != 0 {
			t.Errorf("after the preload: gets %d hits %d misses %d", r.Gets, r.Hits, r.Misses)
		}
	})
}

func TestErrorRepliesCounted(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, func(s *fakeServer) { s.maxValue = 100 })
		cfg := testConfig(srv.addr())
		cfg.NoLoad = true
		cfg.Update = 0.5
		cfg.ValueSize = Uniform{Min: 0, Max: 200}
		cfg.Time = 300 * time.Millisecond
		r := run(t, cfg)
		checkConsistent(t, r)
		// About half the sets are too large.
		if r.Sets == 0 || r.ErrReplies < r.Sets/4 || r.ErrReplies > 3*r.Sets/4 || r.Errors != r.ErrReplies {
			t.Errorf("sets %d, error replies %d, errors %d", r.Sets, r.ErrReplies, r.Errors)
		}
		if !strings.Contains(r.FirstError, "server-error") {
			t.Errorf("first error %q", r.FirstError)
		}
	})
}

// A server that never answers must end the run on time with every request
// counted as unanswered.
func TestSilentServerBounded(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, func(s *fakeServer) { s.silent = true })
		for _, qps := range []float64{0, 500} {
			cfg := testConfig(srv.addr())
			cfg.NoLoad = true
			cfg.QPS, cfg.Depth = qps, 4
			cfg.Time, cfg.DrainTimeout = 300*time.Millisecond, 200*time.Millisecond
			start := time.Now()
			r := run(t, cfg)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("qps %g: run took %v", qps, took)
			}
			if r.Requests != 0 || r.Unanswered != 4 || r.Errors != 4 {
				t.Errorf("qps %g: requests %d unanswered %d errors %d, want 0, depth, depth", qps, r.Requests, r.Unanswered, r.Errors)
			}
			if qps > 0 && r.Unsent == 0 {
				t.Errorf("open loop against a silent server: no unsent requests counted")
			}
		}
	})
}

func TestClosedLoopPipelined(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, nil)
		cfg := testConfig(srv.addr())
		cfg.Depth, cfg.Connections = 8, 2
		cfg.Update = 0.2
		cfg.Time = 500 * time.Millisecond
		r := run(t, cfg)
		checkConsistent(t, r)
		if r.Requests < 100 || r.Errors != 0 || r.Misses != 0 || r.TargetQPS != 0 {
			t.Errorf("closed loop: %+v", r)
		}
	})
}

func TestUnreachableServer(t *testing.T) {
	srv := startFakeServer(t, nil)
	addr := srv.addr()
	srv.ln.Close()
	cfg := testConfig(addr)
	cfg.DialTimeout = time.Second
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Error("Run against a closed port succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
	}{
		{"no server", func(c *Config) { c.Server = "" }},
		{"negative qps", func(c *Config) { c.QPS = -1 }},
		{"NaN qps", func(c *Config) { c.QPS = math.NaN() }},
		{"infinite qps", func(c *Config) { c.QPS = math.Inf(1) }},
		{"NaN update", func(c *Config) { c.Update = math.NaN() }},
		{"zero time", func(c *Config) { c.Time = 0 }},
		{"zero depth", func(c *Config) { c.Depth = 0 }},
		{"zero threads", func(c *Config) { c.Threads = 0 }},
		{"update above 1", func(c *Config) { c.Update = 1.5 }},
		{"noload and loadonly", func(c *Config) { c.NoLoad, c.LoadOnly = true, true }},
		{"no records", func(c *Config) { c.Records = 0 }},
		{"huge value", func(c *Config) { c.MaxValue = MaxValueLen + 1 }},
		{"no key size", func(c *Config) { c.KeySize = nil }},
	}
	base := DefaultConfig()
	if err := base.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.modify(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestReportFormats(t *testing.T) {
	srv := startFakeServer(t, nil)
	cfg := testConfig(srv.addr())
	cfg.QPS, cfg.Time = 1000, 300*time.Millisecond
	r := run(t, cfg)
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#type", "read ", "update ", "Total QPS = ", "Misses = "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"qps", "requests", "gets", "sets", "misses", "errors", "latency_us"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	lat, _ := m["latency_us"].(map[string]any)
	for _, k := range []string{"avg", "p50", "p95", "p99", "max"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("JSON latency_us lacks %q", k)
		}
	}
	if got := m["requests"].(float64); got != float64(r.Requests) || got == 0 {
		t.Errorf("JSON requests %v, result %d", got, r.Requests)
	}
}

func TestConnectionsTimesThreads(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, nil)
		cfg := testConfig(srv.addr())
		cfg.NoLoad = true
		cfg.Connections, cfg.Threads = 3, 2
		cfg.QPS, cfg.Time = 600, 300*time.Millisecond
		r := run(t, cfg)
		srv.mu.Lock()
		accepted := srv.accepted
		srv.mu.Unlock()
		if accepted != 6 || r.Connections != 6 {
			t.Errorf("server accepted %d connections, result says %d; want 3 x 2", accepted, r.Connections)
		}
	})
}

func TestCancelStopsRun(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		srv := startFakeServer(t, nil)
		for _, qps := range []float64{0, 1000} {
			cfg := testConfig(srv.addr())
			cfg.NoLoad = true
			cfg.QPS, cfg.Time = qps, 20*time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			start := time.Now()
			_, err := Run(ctx, cfg)
			cancel()
			if err == nil {
				t.Errorf("qps %g: a cancelled run returned no error", qps)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("qps %g: cancelled run took %v", qps, took)
			}
		}
	})
}
