//go:build !linux

package bench

import "time"

func preparePacerThread() {}

// sleepPrecise falls back to the runtime's timers off Linux.
func sleepPrecise(d time.Duration) { time.Sleep(d) }
