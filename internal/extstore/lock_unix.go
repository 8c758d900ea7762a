//go:build unix

package extstore

import (
	"os"
	"syscall"
)

// lockFile takes memcached's whole-file write lock, so two servers never
// share one file.
func lockFile(f *os.File) error {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	return syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
}
