//go:build linux

package epoll

import (
	"errors"
	"fmt"

	"github.com/gocached/gocached/internal/probe"
	"golang.org/x/sys/unix"
)

// epollParamsUnsupported reports whether err means the kernel cannot take
// epoll busy-poll params at all (before 6.9, no CONFIG_NET_RX_BUSY_POLL, or
// EINVAL from a kernel that does not know the ioctl's layout); the reactors
// then warn once and run without them.
func epollParamsUnsupported(err error) bool {
	return probe.EpollParamsUnsupported(err) || errors.Is(err, unix.EINVAL)
}

// applyEpollParams sets p on epfd and confirms it by reading it back.
func applyEpollParams(epfd int, p probe.EpollParams) (probe.EpollParams, error) {
	if err := probe.SetEpollParams(epfd, p); err != nil {
		if errors.Is(err, unix.EPERM) {
			return probe.EpollParams{}, fmt.Errorf("%w (a busy-poll budget above %d needs CAP_NET_ADMIN)", err, probe.MaxUnprivilegedBudget)
		}
		return probe.EpollParams{}, err
	}
	got, err := probe.GetEpollParams(epfd)
	if err != nil {
		return probe.EpollParams{}, err
	}
	if got != p {
		return got, fmt.Errorf("EPIOCGPARAMS read back %v after setting %v", got, p)
	}
	return got, nil
}
