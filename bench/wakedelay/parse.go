// Package wakedelay measures how long a server's thread waits for a CPU
// once woken, from the scheduler's tracepoints (sched_waking, sched_switch),
// and what held the CPU meanwhile: nothing (the CPU was idle and had to
// wake up), another thread of the same server, or another process. A
// latency tail made by the server's own background work shows up as delays
// charged to its own threads; one made by the machine, as idle or others.
package wakedelay

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
)

// Holder kinds: who ran on the CPU while the thread waited for it.
const (
	HolderIdle  = "idle"        // the CPU was idle (waking it is the wait)
	HolderOwn   = "own threads" // the server's other threads
	HolderOther = "other processes"
)

// Report is what one trace shows about one thread.
type Report struct {
	TID     int
	Wakeups int
	// Delays are the waits from sched_waking to the switch onto a CPU, in
	// microseconds, sorted.
	Delays []float64
	// Held sums, over the waits longer than LongWait, the time each kind
	// of holder ran on the CPU the thread then got, in microseconds, and
	// Waits counts those waits per kind.
	Held  map[string]float64
	Waits map[string]int
	// OwnSlices are the run times (µs, sorted) of the server's other
	// threads, on any CPU: how long one stretch of its own background
	// work can hold a CPU.
	OwnSlices []float64
}

// LongWait is the wait (µs) from which Held and Waits count.
const LongWait = 50

var (
	switchRE = regexp.MustCompile(`\[(\d+)\].* (\d+\.\d+): sched_switch: prev_comm=.* prev_pid=(\d+) .*==> next_comm=.* next_pid=(\d+) `)
	wakingRE = regexp.MustCompile(` (\d+\.\d+): sched_waking: comm=.* pid=(\d+) `)
)

// running is what a CPU runs since when.
type running struct {
	tid   int
	since float64
}

// Parse reads a tracefs trace (sched_switch and sched_waking events with
// the mono clock) and reports on thread tid; own holds the tids of the
// server's threads (tid included).
func Parse(r io.Reader, tid int, own map[int]bool) (*Report, error) {
	rep := &Report{TID: tid, Held: map[string]float64{}, Waits: map[string]int{}}
	cur := map[int]running{}
	// What ran on each CPU since the current wait began.
	type interval struct {
		tid      int
		from, to float64
	}
	waking := -1.0 // when the thread was woken; < 0: it is not waiting
	var since []interval
	var sinceCPU []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := switchRE.FindStringSubmatch(line); m != nil {
			cpu, _ := strconv.Atoi(m[1])
			t, _ := strconv.ParseFloat(m[2], 64)
			prev, _ := strconv.Atoi(m[3])
			next, _ := strconv.Atoi(m[4])
			if c, ok := cur[cpu]; ok && c.tid == prev {
				if own[prev] && prev != tid {
					rep.OwnSlices = append(rep.OwnSlices, (t-c.since)*1e6)
				}
				if waking >= 0 && prev != tid {
					since = append(since, interval{prev, max(c.since, waking), t})
					sinceCPU = append(sinceCPU, cpu)
				}
			}
			cur[cpu] = running{next, t}
			if next == tid && waking >= 0 {
				d := (t - waking) * 1e6
				rep.Delays = append(rep.Delays, d)
				if d > LongWait {
					seen := map[string]bool{}
					for i, iv := range since {
						if sinceCPU[i] != cpu {
							continue
						}
						k := kind(iv.tid, own)
						rep.Held[k] += (iv.to - iv.from) * 1e6
						if !seen[k] {
							rep.Waits[k]++
							seen[k] = true
						}
					}
				}
				waking, since, sinceCPU = -1, since[:0], sinceCPU[:0]
			}
			continue
		}
		if m := wakingRE.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[2])
			if pid == tid && waking < 0 {
				waking, _ = strconv.ParseFloat(m[1], 64)
				rep.Wakeups++
			}
		}
	}
	slices.Sort(rep.Delays)
	slices.Sort(rep.OwnSlices)
	return rep, sc.Err()
}

func kind(tid int, own map[int]bool) string {
	switch {
	case tid == 0:
		return HolderIdle
	case own[tid]:
		return HolderOwn
	}
	return HolderOther
}

// Quantile is the q-quantile of sorted xs (0 for none).
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}
