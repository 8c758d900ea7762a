package bench

import (
	"fmt"
	"sync"
	"time"
)

// progressAfter is the shortest run that gets progress lines.
const progressAfter = 3 * time.Second

// startProgress prints one line per interval to cfg.Progress with the
// rate of replies since the previous line; the returned func stops it.
func startProgress(cfg *Config, received func() int64, clk clock, win window) (stop func()) {
	total := time.Duration(win.end)
	if cfg.Progress == nil || total < progressAfter || cfg.ProgressEvery <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(cfg.ProgressEvery)
		defer tick.Stop()
		last, lastAt := int64(0), clk.now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			got := received()
			now := clk.now()
			phase := "measure"
			if now < win.start {
				phase = "warmup"
			} else if now >= win.end {
				phase = "drain"
			}
			rate := float64(got-last) / (float64(now-lastAt) / 1e9)
			fmt.Fprintf(cfg.Progress, "mcload: %5.1fs/%.0fs %-7s %10.0f req/s  %d replies\n",
				float64(now)/1e9, total.Seconds(), phase, rate, got)
			last, lastAt = got, now
		}
	}()
	return func() { close(done); wg.Wait() }
}
