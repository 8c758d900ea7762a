package wakedelay

import (
	"strings"
	"testing"
)

// A trace in tracefs's text form: thread 100 (the reactor) of a server
// whose other thread is 101; 200 is another process.
const sample = `# tracer: nop
          <idle>-0       [001] d..2.   10.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=gocached next_pid=100 next_prio=120
        gocached-100     [001] d..2.   10.000010: sched_switch: prev_comm=gocached prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          mcload-300     [000] d..2.   10.000100: sched_waking: comm=gocached pid=100 prio=120 target_cpu=001
          <idle>-0       [001] d..2.   10.000130: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=gocached next_pid=100 next_prio=120
        gocached-100     [001] d..2.   10.000140: sched_switch: prev_comm=gocached prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=gocached next_pid=101 next_prio=120
          mcload-300     [000] d..2.   10.000150: sched_waking: comm=gocached pid=100 prio=120 target_cpu=001
        gocached-101     [001] d..2.   10.000450: sched_switch: prev_comm=gocached prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=other next_pid=200 next_prio=120
           other-200     [001] d..2.   10.000500: sched_switch: prev_comm=other prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=gocached next_pid=100 next_prio=120
        gocached-100     [001] d..2.   10.000510: sched_switch: prev_comm=gocached prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          mcload-300     [000] d..2.   10.000600: sched_waking: comm=gocached pid=100 prio=120 target_cpu=001
          <idle>-0       [001] d..2.   10.000610: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=gocached next_pid=100 next_prio=120
`

func TestParse(t *testing.T) {
	rep, err := Parse(strings.NewReader(sample), 100, map[int]bool{100: true, 101: true})
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return a-b < 0.01 && b-a < 0.01 }
	want := []float64{10, 30, 350} // sorted waits, µs
	if len(rep.Delays) != len(want) || rep.Wakeups != 3 {
		t.Fatalf("delays %v (%d wake-ups), want %v", rep.Delays, rep.Wakeups, want)
	}
	for i := range want {
		if !near(rep.Delays[i], want[i]) {
			t.Errorf("delay %d: %.2f µs, want %.0f", i, rep.Delays[i], want[i])
		}
	}
	// Only the 350 µs wait is long: 101 held the CPU 300 µs of it (from
	// the waking at .150 to .450), 200 for 50.
	cases := []struct {
		kind  string
		held  float64
		waits int
	}{
		{HolderOwn, 300, 1},
		{HolderOther, 50, 1},
		{HolderIdle, 0, 0},
	}
	for _, c := range cases {
		if !near(rep.Held[c.kind], c.held) || rep.Waits[c.kind] != c.waits {
			t.Errorf("%s: held %.2f µs in %d waits, want %.0f in %d", c.kind, rep.Held[c.kind], rep.Waits[c.kind], c.held, c.waits)
		}
	}
	if len(rep.OwnSlices) != 1 || !near(rep.OwnSlices[0], 310) {
		t.Errorf("own slices %v, want one of 310 µs (101 from .140 to .450)", rep.OwnSlices)
	}
	if q := Quantile(rep.Delays, 0.5); !near(q, 30) {
		t.Errorf("median %.2f, want 30", q)
	}
}

// Parse takes any text without panicking, and what it reports is
// consistent: no more waits than wake-ups, none negative, sorted.
func FuzzParse(f *testing.F) {
	f.Add(sample, 100)
	f.Add("", 0)
	f.Add(" 1.5: sched_waking: comm=x pid=7 \n[000] a 2.0: sched_switch: prev_comm=a prev_pid=0 p ==> next_comm=b next_pid=7 \n", 7)
	f.Fuzz(func(t *testing.T, text string, tid int) {
		rep, err := Parse(strings.NewReader(text), tid, map[int]bool{tid: true, 101: true})
		if err != nil {
			return // a line longer than the scanner takes
		}
		if len(rep.Delays) > rep.Wakeups {
			t.Fatalf("%d waits from %d wake-ups", len(rep.Delays), rep.Wakeups)
		}
		for i, d := range rep.Delays {
			if i > 0 && d < rep.Delays[i-1] {
				t.Fatalf("delays not sorted: %v", rep.Delays)
			}
		}
		_ = Quantile(rep.Delays, 0.99)
	})
}
