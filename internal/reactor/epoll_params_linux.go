//go:build linux

package reactor

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollParams mirrors the kernel's struct epoll_params (include/uapi/linux/eventpoll.h,
// Linux 6.9+): the per-epoll-context busy-poll settings set with EPIOCSPARAMS.
// x/sys has the ioctl numbers but not the struct; its layout is fixed at 8 bytes.
type epollParams struct {
	BusyPollUsecs  uint32
	BusyPollBudget uint16
	PreferBusyPoll uint8
	pad            uint8 // must be 0 or the kernel answers EINVAL
}

var _ [8 - unsafe.Sizeof(epollParams{})]struct{} // the kernel ABI is 8 bytes

// setEpollParams issues EPIOCSPARAMS on epfd.
func setEpollParams(epfd int, p epollParams) error {
	p.pad = 0
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(epfd), uintptr(unix.EPIOCSPARAMS), uintptr(unsafe.Pointer(&p)))
	if errno != 0 {
		return fmt.Errorf("EPIOCSPARAMS: %w", errno)
	}
	return nil
}

// getEpollParams reads the busy-poll settings of epfd back with EPIOCGPARAMS.
func getEpollParams(epfd int) (epollParams, error) {
	var p epollParams
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(epfd), uintptr(unix.EPIOCGPARAMS), uintptr(unsafe.Pointer(&p)))
	if errno != 0 {
		return epollParams{}, fmt.Errorf("EPIOCGPARAMS: %w", errno)
	}
	return p, nil
}

// epollParamsUnsupported reports whether err means the kernel has no epoll
// busy-poll ioctls (older than 6.9, or built without CONFIG_NET_RX_BUSY_POLL).
func epollParamsUnsupported(err error) bool {
	return errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)
}

// applyEpollParams sets p on epfd and confirms it by reading it back.
func applyEpollParams(epfd int, p epollParams) (epollParams, error) {
	if err := setEpollParams(epfd, p); err != nil {
		if errors.Is(err, unix.EPERM) {
			return epollParams{}, fmt.Errorf("%w (a busy-poll budget above 64 needs CAP_NET_ADMIN)", err)
		}
		return epollParams{}, err
	}
	got, err := getEpollParams(epfd)
	if err != nil {
		return epollParams{}, err
	}
	if got != p {
		return got, fmt.Errorf("EPIOCGPARAMS read back %+v after setting %+v", got, p)
	}
	return got, nil
}
