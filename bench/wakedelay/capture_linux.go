package wakedelay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/idle"
)

// Tracefs is where the kernel's tracing file system is mounted.
const Tracefs = "/sys/kernel/tracing"

var events = []string{"sched/sched_switch", "sched/sched_waking"}

// Capture records the scheduler's switch and waking events on every CPU
// for window and returns the trace text. It needs root and tracefs; it
// leaves the events, the clock and tracing_on as it found them, and clears
// the buffer.
func Capture(window time.Duration) ([]byte, error) {
	if _, err := os.Stat(filepath.Join(Tracefs, "trace")); err != nil {
		return nil, fmt.Errorf("tracefs is not mounted at %s (mount -t tracefs nodev %s): %w", Tracefs, Tracefs, err)
	}
	restore := map[string]string{}
	set := func(file, val string) error {
		p := filepath.Join(Tracefs, file)
		if _, ok := restore[file]; !ok {
			old, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := strings.TrimSpace(string(old))
			if file == "trace_clock" { // "[local] global mono ...": the bracketed one
				if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
					s = s[i+1 : j]
				}
			}
			restore[file] = s
		}
		return os.WriteFile(p, []byte(val), 0)
	}
	defer func() {
		for file, val := range restore {
			_ = os.WriteFile(filepath.Join(Tracefs, file), []byte(val), 0)
		}
		_ = os.WriteFile(filepath.Join(Tracefs, "trace"), nil, 0)
	}()
	steps := [][2]string{{"tracing_on", "0"}, {"buffer_size_kb", "65536"}, {"trace_clock", "mono"}}
	for _, e := range events {
		steps = append(steps, [2]string{filepath.Join("events", e, "enable"), "1"})
	}
	for _, s := range steps {
		if err := set(s[0], s[1]); err != nil {
			return nil, fmt.Errorf("tracefs %s: %w", s[0], err)
		}
	}
	if err := os.WriteFile(filepath.Join(Tracefs, "trace"), nil, 0); err != nil {
		return nil, err
	}
	if err := set("tracing_on", "1"); err != nil {
		return nil, err
	}
	time.Sleep(window)
	if err := os.WriteFile(filepath.Join(Tracefs, "tracing_on"), []byte("0"), 0); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(Tracefs, "trace"))
}

// Busiest is the thread of pid that used the most CPU over d: a reactor
// serving load.
func Busiest(pid int, d time.Duration) (int, error) {
	a, err := idle.RunTimes(pid)
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	b, err := idle.RunTimes(pid)
	if err != nil {
		return 0, err
	}
	best, most := 0, uint64(0)
	for tid, ns := range b {
		if used := ns - a[tid]; used >= most {
			best, most = tid, used
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("process %d has no threads", pid)
	}
	return best, nil
}
