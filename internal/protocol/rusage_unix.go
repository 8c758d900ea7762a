//go:build unix

package protocol

import "syscall"

// rusage returns the process's user and system CPU time in microseconds.
func rusage() (user, sys int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec), ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}
