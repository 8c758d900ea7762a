//go:build linux

package procctl

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// capKeeper is one OS thread that keeps CAP_NET_ADMIN when -u drops root,
// so that the NAPI knobs a poll mode set can still be put back at exit.
//
// Capabilities belong to threads. setuid (which Go applies to every thread)
// clears a thread's capabilities unless that thread set PR_SET_KEEPCAPS, in
// which case only the effective set is cleared. So one goroutine, locked to
// its thread for good, sets the flag before the switch and afterwards
// narrows its sets to CAP_NET_ADMIN alone; every other thread, where all
// requests are served, ends with no capability at all. Netlink checks the
// capability of the thread that sends, so the restore runs on the keeper.
type capKeeper struct {
	work chan func()
}

// startCapKeeper starts the keeper thread and sets PR_SET_KEEPCAPS on it.
// Call it before the uid changes.
func startCapKeeper() (*capKeeper, error) {
	k := &capKeeper{work: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread carries the capability
		ready <- unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0)
		for fn := range k.work {
			fn()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("PR_SET_KEEPCAPS: %w", err)
	}
	return k, nil
}

// do runs fn on the keeper thread and returns its error.
func (k *capKeeper) do(fn func() error) error {
	done := make(chan error, 1)
	k.work <- func() { done <- fn() }
	return <-done
}

// keepOnlyNetAdmin narrows the keeper thread's capabilities to
// CAP_NET_ADMIN, permitted and effective. Call it after the uid changed.
func (k *capKeeper) keepOnlyNetAdmin() error {
	return k.do(func() error {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		bit := uint32(1) << (unix.CAP_NET_ADMIN % 32)
		data[unix.CAP_NET_ADMIN/32].Permitted = bit
		data[unix.CAP_NET_ADMIN/32].Effective = bit
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("keep CAP_NET_ADMIN: %w", err)
		}
		return nil
	})
}
