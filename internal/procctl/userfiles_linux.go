package procctl

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// asUserFiles runs fn on a thread whose file-system identity is uid and gid
// (setfsuid, setfsgid, its supplementary groups only gid): the kernel then
// checks fn's opens as it would the user's, root's capabilities to override
// file permissions dropped with the identity, and a file fn creates is the
// user's. Only that thread changes; it is discarded after fn, since its
// goroutine ends locked to it.
func asUserFiles(uid, gid int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		// x/sys's Setgroups is this thread's alone (syscall's would
		// change every thread's).
		if err := unix.Setgroups([]int{gid}); err != nil {
			done <- err
			return
		}
		if err := unix.Setfsgid(gid); err != nil {
			done <- err
			return
		}
		if err := unix.Setfsuid(uid); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

// canCreateIn reports whether this thread's file-system identity may create
// files in dir (AT_EACCESS: checked with that identity, not the real one).
func canCreateIn(dir string) error {
	return unix.Faccessat2(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS)
}
