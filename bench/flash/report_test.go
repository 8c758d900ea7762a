package flash

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gocached/gocached/bench/scenario"
)

func TestSpread(t *testing.T) {
	if s := spreadOf([]float64{3, 1, 2}); s != (Spread{Median: 2, Min: 1, Max: 3, N: 3}) {
		t.Errorf("odd: %+v", s)
	}
	if s := spreadOf([]float64{4, 1, 2, 3}); s.Median != 2.5 {
		t.Errorf("even: %+v", s)
	}
	if s := spreadOf(nil); s.N != 0 {
		t.Errorf("empty: %+v", s)
	}
	if got := fmtSpread(Spread{Median: 2, Min: 1, Max: 3, N: 3}, "%.0f"); got != "2 (1–3)" {
		t.Errorf("fmtSpread = %q", got)
	}
	if got := fmtSpread(Spread{Median: 100, Min: 99.99, Max: 100, N: 3}, "%.1f"); got != "100.0" {
		t.Errorf("a range that prints as one value printed as %q", got)
	}
	if got := fmtSpread(Spread{N: 2}, "%.1f"); got != "0.0" {
		t.Errorf("a measured zero printed as %q", got)
	}
	if got := fmtSpread(Spread{}, "%.1f"); got != "–" {
		t.Errorf("no data printed as %q", got)
	}
}

func TestRecordDerivedValues(t *testing.T) {
	var r Record
	before := Stats{"version": "1.6.45", "cmd_get": "100", "get_hits": "90", "get_extstore": "10", "recache_from_extstore": "0"}
	after := Stats{"version": "1.6.45", "cmd_get": "1100", "get_hits": "890", "get_extstore": "610", "recache_from_extstore": "3"}
	r.fillServer(before, after)
	if r.HitRatio() != 0.8 || r.FlashShare() != 0.75 || r.Recached != 3 || r.Version != "1.6.45" {
		t.Errorf("hit ratio %g, flash share %g, recached %d; want 0.8, 0.75, 3", r.HitRatio(), r.FlashShare(), r.Recached)
	}
	r.Gets, r.Fills = 900, 100
	// 4 s: the server ran 2 s; its core was idle 1.2 s and stolen 0.4 s,
	// so 0.4 s (10 %) of it went elsewhere. The machine's process ticks
	// are 650 and softirq 50, the server's and client's 600 (softirq
	// included): other processes 100 of 1000.
	r.fillCPU(cpuDelta{runNs: 2_000_000_000, seconds: 4,
		all:  scenario.SystemCPU{User: 650, SoftIRQ: 50, Idle: 200, Steal: 100},
		core: scenario.SystemCPU{User: 100, Idle: 120, Steal: 40}, ownTicks: 600})
	if r.ServerCPUPct != 50 || r.NsPerReq != 2_000_000 || r.StealPct != 10 || math.Abs(r.OutsidePct-10) > 1e-9 || r.OtherProcsPct != 10 {
		t.Errorf("cpu %g %%, %g ns/req, steal %g %%, outside %g %%, other processes %g %%", r.ServerCPUPct, r.NsPerReq, r.StealPct, r.OutsidePct, r.OtherProcsPct)
	}
	var empty Record
	if empty.HitRatio() != 0 || empty.FlashShare() != 0 || empty.Agreement() != -1 {
		t.Error("a record without gets has ratios")
	}
	r.judge(5, 10)
	if r.Disturbed != "steal 10.0 %" {
		t.Errorf("steal 10 %%: disturbed %q", r.Disturbed)
	}
	r.Disturbed, r.StealPct = "", 1
	if r.judge(5, 10); r.Disturbed != "" {
		t.Errorf("other processes 10 %% (at the limit): disturbed %q", r.Disturbed)
	}
	r.OtherProcsPct = 10.5
	if r.judge(5, 10); r.Disturbed != "other processes 10.5 %" {
		t.Errorf("other processes 10.5 %%: disturbed %q", r.Disturbed)
	}
}

func testRecords() []Record {
	mk := func(target string, round int, flash bool, hits, ext int64, qps float64) Record {
		r := Record{Target: target, Version: map[string]string{"memcached": "1.6.45"}[target], Round: round, FlashTier: flash, CmdGet: 1000, GetHits: hits, GetExtstore: ext, QPS: qps,
			All: Latency{Count: 1000, P50: 50, P99: 200}, RAM: Latency{Count: 400, P50: 40, P99: 150}}
		if flash {
			r.Flash = Latency{Count: 500, P50: 90, P99: 400}
			r.TaggedFlashHits, r.TaggedGetExtstore = 500, 500
		}
		return r
	}
	recs := []Record{
		mk("memcached", 1, true, 990, 600, 30000),
		mk("gocached", 1, false, 780, 0, 40000),
		mk("gocached", 2, false, 790, 0, 42000),
		mk("memcached", 2, true, 995, 610, 31000),
		mk("memcached", 3, true, 985, 590, 29000),
		{Target: "gocached", Round: 3, Error: "start: boom"},
		{Target: "gocached", Round: 4, QPS: 1, CmdGet: 10, Disturbed: "others 40 %"},
		{Target: "other", Round: 1, QPS: 7, CmdGet: 10, GetHits: 5, Disturbed: "steal 9 %"},
	}
	return recs
}

func TestSummarize(t *testing.T) {
	sums := Summarize(testRecords())
	if len(sums) != 3 || sums[0].Target != "memcached" || sums[1].Target != "gocached" {
		t.Fatalf("summaries %+v", sums)
	}
	m, g := sums[0], sums[1]
	if m.Runs != 3 || m.Failed != 0 || !m.FlashTier || m.Label != "memcached 1.6.45" {
		t.Errorf("memcached: %+v", m)
	}
	if m.HitPct.Median != 99 || m.QPS != (Spread{Median: 30000, Min: 29000, Max: 31000, N: 3}) || m.Agreement.Median != 1 {
		t.Errorf("memcached medians: hit %+v qps %+v agreement %+v", m.HitPct, m.QPS, m.Agreement)
	}
	if g.Runs != 2 || g.Failed != 1 || g.Disturbed != 1 || g.AllDisturbed || g.FlashTier || !strings.Contains(g.Label, "no flash tier") {
		t.Errorf("gocached: runs %d failed %d disturbed %d flash %v label %q", g.Runs, g.Failed, g.Disturbed, g.FlashTier, g.Label)
	}
	// The disturbed run is not in the medians.
	if g.QPS.Min != 40000 {
		t.Errorf("gocached qps %+v includes the disturbed run", g.QPS)
	}
	if x := sums[2]; x.Runs != 1 || !x.AllDisturbed || x.QPS.Median != 7 || x.HitPct.Median != 50 {
		t.Errorf("all disturbed: %+v", x)
	}
	// No flash hits: no flash latency, not a latency of zero.
	if g.FlashP99.N != 0 || g.Agreement.N != 0 || g.FlashPct.Median != 0 || g.FlashPct.N != 2 {
		t.Errorf("gocached flash columns: p99 %+v agreement %+v share %+v", g.FlashP99, g.Agreement, g.FlashPct)
	}
}

func TestWriteMarkdownAndJSON(t *testing.T) {
	o := DefaultOptions()
	o.ExtOptions = []string{"ext_item_age=5"}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, &o, Summarize(testRecords())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"-m 64, ext_path 1024 MB (ext_item_age=5)", "| memcached 1.6.45 | 3 | 99.0 (98.5–99.5) |",
		"| gocached (no flash tier: ext_path ignored) | 2 (+1 disturbed) (+1 failed) | 78.5 (78.0–79.0) | 0.0 |", "| – / – | – |",
		"| other (no flash tier: ext_path ignored) | 1 (all disturbed) |", "steal above 5 % or other processes above 10 % of the machine"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteJSON(&b, &o, testRecords()); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Records   []Record
		Summaries []Summary
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Records) != 8 || len(back.Summaries) != 3 {
		t.Errorf("JSON round trip: %v, %d records, %d summaries", err, len(back.Records), len(back.Summaries))
	}
	o2, recs, err := ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil || len(recs) != 8 || o2.MemoryMB != o.MemoryMB || o2.Settle != o.Settle || len(o2.ExtOptions) != 1 {
		t.Errorf("ReadJSON: %v, %d records, options %+v", err, len(recs), o2)
	}
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	args := strings.Join(o.serverArgs("/tmp/x/extstore"), " ")
	if want := "-t 1 -c 1024 -m 64 -u root -o ext_path=/tmp/x/extstore:1024m"; !strings.Contains(args, want) {
		t.Errorf("server args %q lack %q", args, want)
	}
	o.ExtOptions = []string{"ext_item_age=5", "ext_wbuf_size=8"}
	if args := strings.Join(o.serverArgs("/f"), " "); !strings.HasSuffix(args, "-o ext_path=/f:1024m,ext_item_age=5,ext_wbuf_size=8") {
		t.Errorf("server args %q", args)
	}
	for name, mut := range map[string]func(*Options){
		"target":        func(o *Options) { o.Targets = []string{"redis"} },
		"ext_path":      func(o *Options) { o.ExtOptions = []string{"ext_path=/x:1g"} },
		"not ext":       func(o *Options) { o.ExtOptions = []string{"slab_chunk_max=1"} },
		"small values":  func(o *Options) { o.ValueSize = "uniform:100-8000" },
		"huge values":   func(o *Options) { o.ValueSize = "fixed:1000000" },
		"no time":       func(o *Options) { o.Time = 0 },
		"working set":   func(o *Options) { o.WorkingSet = 0 },
		"settle":        func(o *Options) { o.Settle.Max = 0 },
		"bad spec":      func(o *Options) { o.ValueSize = "zipf:1" },
		"small memory":  func(o *Options) { o.MemoryMB = 1 },
		"tagged phase":  func(o *Options) { o.TaggedTime = -1 },
		"too many conn": func(o *Options) { o.Conns = 1000 },
	} {
		o := DefaultOptions()
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWorkload(t *testing.T) {
	o := DefaultOptions()
	o.MemoryMB, o.WorkingSet = 8, 4
	w, err := newWorkload(&o)
	if err != nil {
		t.Fatal(err)
	}
	mb := float64(w.bytes) / (1 << 20)
	if mb < 30 || mb > 34 || w.min < 4096 || len(w.sizes) != w.zipf.Records() {
		t.Errorf("%d records, %.1f MB, smallest %d", len(w.sizes), mb, w.min)
	}
	// A quarter of the bytes hold more than a quarter of the gets under Zipf.
	if b := w.ramBound(8); b <= 0.25 || b >= 1 {
		t.Errorf("ramBound = %g", b)
	}
	w2, _ := newWorkload(&o)
	for i := range w.sizes {
		if w.sizes[i] != w2.sizes[i] {
			t.Fatal("the same seed gave other value sizes")
		}
	}
}
