//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// ringFlags is how every reactor's ring is set up. SINGLE_ISSUER lets the
// kernel skip the locking a shared ring needs; DEFER_TASKRUN makes the
// kernel finish socket operations (copying received bytes, posting CQEs)
// only when the reactor enters to wait, in one batch on its own thread,
// instead of interrupting it with task work (it supersedes COOP_TASKRUN,
// whose only job is to avoid those interruptions). R_DISABLED defers the
// choice of the issuing thread to enable, called on the reactor's locked
// thread. SUBMIT_ALL keeps one bad SQE from holding back the rest of a batch.
const ringFlags = uringsys.SetupSingleIssuer | uringsys.SetupDeferTaskrun | uringsys.SetupSubmitAll | uringsys.SetupRDisabled

// errNoIOUring wraps every error that means "this system has no usable
// io_uring", so New can say so in one line.
var errNoIOUring = errors.New("io_uring unavailable")

// Available reports whether io_uring can run this engine here: nil, or an
// error of one line that says why not and what to use instead. It sets up
// and closes a small ring, so it is cheap enough for `doctor`.
func Available() error {
	r, err := uringsys.NewRing(4, 8, ringFlags)
	if err != nil {
		return describeSetupError(err)
	}
	r.Close()
	return nil
}

// describeSetupError turns io_uring_setup's errno into the one line New
// returns.
func describeSetupError(err error) error {
	const hint = "; use --engine=epoll"
	switch {
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("uring: this kernel has no io_uring (io_uring_setup: ENOSYS)%s: %w", hint, errNoIOUring)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		why := "blocked by a seccomp filter or the container runtime"
		switch readSysctl("/proc/sys/kernel/io_uring_disabled") {
		case "2":
			why = "disabled by sysctl kernel.io_uring_disabled=2"
		case "1":
			why = "restricted by kernel.io_uring_disabled=1 to root and the group in kernel.io_uring_group"
		}
		return fmt.Errorf("uring: io_uring is %s (io_uring_setup: %v)%s: %w", why, err, hint, errNoIOUring)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("uring: the kernel refused IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (needs Linux 6.1+)%s: %w", hint, errNoIOUring)
	case errors.Is(err, unix.ENOMEM):
		return fmt.Errorf("uring: io_uring_setup: %v (locked-memory limit too low?)%s: %w", err, hint, errNoIOUring)
	}
	return fmt.Errorf("uring: io_uring_setup: %v%s: %w", err, hint, errNoIOUring)
}

func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// setupFlagNames lists the setup flags a ring runs with, for logs and
// `stats reactors`.
func setupFlagNames(flags uint32) string {
	var names []string
	for _, f := range []struct {
		bit  uint32
		name string
	}{{uringsys.SetupSingleIssuer, "single_issuer"}, {uringsys.SetupDeferTaskrun, "defer_taskrun"},
		{uringsys.SetupCoopTaskrun, "coop_taskrun"}, {uringsys.SetupSubmitAll, "submit_all"}} {
		if flags&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}
