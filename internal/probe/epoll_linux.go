package probe

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// EpollParams are the busy-poll settings of one epoll context, the
// arguments of the EPIOCSPARAMS/EPIOCGPARAMS ioctls (Linux 6.9+).
type EpollParams struct {
	BusyPollUsecs  uint32 // how long epoll_wait busy-polls before sleeping; 0 = no busy polling
	BusyPollBudget uint16 // packets per poll; above 64 needs CAP_NET_ADMIN
	PreferBusyPoll bool   // suppress softirq processing while the app polls
}

// MaxUnprivilegedBudget is the largest budget (NAPI_POLL_WEIGHT) the kernel
// accepts from a process without CAP_NET_ADMIN.
const MaxUnprivilegedBudget = 64

// epollParamsABI is the kernel's struct epoll_params, byte for byte.
type epollParamsABI struct {
	busyPollUsecs  uint32
	busyPollBudget uint16
	preferBusyPoll uint8
	pad            uint8 // must be zero, or the kernel answers EINVAL
}

// The ioctl numbers encode a size of 8; a layout change must not compile.
var _ [8]byte = [unsafe.Sizeof(epollParamsABI{})]byte{}

func (p EpollParams) abi() epollParamsABI {
	a := epollParamsABI{busyPollUsecs: p.BusyPollUsecs, busyPollBudget: p.BusyPollBudget}
	if p.PreferBusyPoll {
		a.preferBusyPoll = 1
	}
	return a
}

func (a epollParamsABI) params() EpollParams {
	return EpollParams{BusyPollUsecs: a.busyPollUsecs, BusyPollBudget: a.busyPollBudget, PreferBusyPoll: a.preferBusyPoll != 0}
}

func (p EpollParams) String() string {
	return fmt.Sprintf("busy_poll_usecs=%d busy_poll_budget=%d prefer_busy_poll=%t", p.BusyPollUsecs, p.BusyPollBudget, p.PreferBusyPoll)
}

func epollIoctl(epfd int, req uint, a *epollParamsABI) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(epfd), uintptr(req), uintptr(unsafe.Pointer(a)))
	if errno != 0 {
		return errno
	}
	return nil
}

// SetEpollParams applies p to the epoll instance epfd with EPIOCSPARAMS.
// The error wraps the errno: EPERM for a budget above 64 without
// CAP_NET_ADMIN, EINVAL for usecs above MaxInt32, ENOTTY on kernels before
// 6.9 or built without CONFIG_NET_RX_BUSY_POLL (see EpollParamsUnsupported).
func SetEpollParams(epfd int, p EpollParams) error {
	a := p.abi()
	if err := epollIoctl(epfd, unix.EPIOCSPARAMS, &a); err != nil {
		return fmt.Errorf("EPIOCSPARAMS %s on epoll fd %d: %w", p, epfd, err)
	}
	return nil
}

// GetEpollParams reads epfd's busy-poll settings with EPIOCGPARAMS.
func GetEpollParams(epfd int) (EpollParams, error) {
	var a epollParamsABI
	if err := epollIoctl(epfd, unix.EPIOCGPARAMS, &a); err != nil {
		return EpollParams{}, fmt.Errorf("EPIOCGPARAMS on epoll fd %d: %w", epfd, err)
	}
	return a.params(), nil
}

// EpollParamsUnsupported reports whether err (from SetEpollParams or
// GetEpollParams) means this kernel has no epoll busy-poll ioctls at all, as
// opposed to rejecting particular values.
func EpollParamsUnsupported(err error) bool {
	return errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EOPNOTSUPP)
}

// EpollParamsSupported creates a throwaway epoll fd, sets modest params
// (budget 8, no privilege needed) and reads them back.
func EpollParamsSupported() Result {
	r := Result{Feature: "EPIOCSPARAMS"}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		r.Err = fmt.Errorf("epoll_create1: %w", err)
		r.Sentence = "cannot create an epoll fd to probe: " + err.Error()
		return r
	}
	defer unix.Close(epfd)
	want := EpollParams{BusyPollUsecs: 50, BusyPollBudget: 8, PreferBusyPoll: true}
	if err := SetEpollParams(epfd, want); err != nil {
		r.Err = err
		if EpollParamsUnsupported(err) {
			r.Sentence = "the kernel has no epoll busy-poll ioctls (needs Linux 6.9+ with CONFIG_NET_RX_BUSY_POLL); reactors will run without busy polling"
		} else {
			r.Sentence = "EPIOCSPARAMS exists but rejected a valid setting: " + err.Error()
		}
		return r
	}
	got, err := GetEpollParams(epfd)
	if err != nil {
		r.Err = err
		r.Sentence = "EPIOCSPARAMS works but EPIOCGPARAMS failed: " + err.Error()
		return r
	}
	if got != want {
		r.Err = fmt.Errorf("read back %s, set %s", got, want)
		r.Sentence = "epoll busy-poll params do not read back as set: " + r.Err.Error()
		return r
	}
	r.Supported = true
	r.Sentence = "per-epoll busy-poll params set and read back (" + got.String() + ")"
	return r
}
