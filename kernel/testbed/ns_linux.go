package testbed

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// InNS runs fn on a locked OS thread switched into network namespace ns (an
// `ip netns` name), then switches the thread back. Sockets fn creates stay in
// ns for their whole life, so a listener or connection made in fn can be used
// from any goroutine afterwards. Runtime-spawned threads never inherit the
// switched namespace (Go starts new threads from a clean template thread).
// If switching back fails the thread stays locked and dies with its
// goroutine, so no other goroutine ever runs in the wrong namespace.
func InNS(ns string, fn func() error) error {
	target, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", ns, err)
	}
	defer unix.Close(target)

	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open own netns: %w", err)
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("setns into %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns back from %s: %w (fn: %v)", ns, err, ferr)
			return // thread stays locked and is discarded
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// InNS runs fn inside namespace ns of this bed (b.ServerNS or b.ClientNS).
func (b *Bed) InNS(ns string, fn func() error) error {
	if ns != b.ServerNS && ns != b.ClientNS {
		return fmt.Errorf("testbed %s: %q is neither %s nor %s", b.Name, ns, b.ServerNS, b.ClientNS)
	}
	return InNS(ns, fn)
}
