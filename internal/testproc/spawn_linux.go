package testproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setParentDeathSignal makes the kernel SIGKILL the child when the thread
// that forked it ends (see Cmd), keeping any other attribute the caller set.
func setParentDeathSignal(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// spawner is the goroutine every Cmd is forked from: locked to its thread
// and never returning, so that thread lives as long as the test binary.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	start func() error
	done  chan error
}

// spawn runs start (an exec.Cmd's Start) on the spawner's thread.
func spawn(start func() error) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must not be reused or ended
			close(locked)
			for r := range spawner.reqs {
				r.done <- r.start()
			}
		}()
		<-locked
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{start: start, done: done}
	return <-done
}
