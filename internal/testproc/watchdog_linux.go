package testproc

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
)

// watchdog kills a child that may have lost its parent-death signal. The
// kernel clears that signal when the child changes its user, group or
// file-system identity: every memcached a root test starts (testproc's
// Memcached adds -u nobody), and gocached under -u, outlived a killed test
// binary all the same. The watchdog is a shell reading a pipe whose write
// end only this process holds: when the test binary dies the read sees
// EOF and the shell kills the child; when the child is reaped first, Wait
// writes a line and the shell exits without killing.
//
// The shell itself gets no parent-death signal (it must outlive the test
// binary by the moment it takes to kill), and exits on EOF, so it does
// not outlive the binary either.
type watchdog struct {
	w    *os.File
	sh   *exec.Cmd
	once sync.Once
}

// needWatchdog: only root can change its identity (setuid binaries aside,
// which the tests do not start).
var needWatchdog = os.Geteuid() == 0

// startWatchdog guards pid, or returns nil when it need not or cannot
// (the child then has its parent-death signal only).
func startWatchdog(pid int) *watchdog {
	if !needWatchdog {
		return nil
	}
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil
	}
	sh := exec.Command("/bin/sh", "-c", `read -r line || kill -KILL "$0" 2>/dev/null`, strconv.Itoa(pid))
	sh.Stdin = r
	err = sh.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &watchdog{w: w, sh: sh}
}

// release tells the watchdog its child has been reaped, and reaps it.
func (d *watchdog) release() {
	if d == nil {
		return
	}
	d.once.Do(func() {
		_, _ = d.w.Write([]byte("reaped\n"))
		d.w.Close()
		_ = d.sh.Wait()
	})
}
