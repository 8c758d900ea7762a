//go:build !linux

package cli

import (
	"errors"

	"github.com/gocached/gocached/internal/probe"
)

// gather on other systems: the kernel features doctor checks are Linux's.
func gather(iface, mode, pin string) facts {
	missing := probe.Result{Sentence: "needs Linux", Err: errors.New("not Linux")}
	return facts{modeName: mode, iface: iface, pinSpec: pin, kernel: missing, epoll: missing, uring: missing,
		napiID: missing, capNetAdmin: missing, familyErr: errors.New("netdev generic netlink needs Linux")}
}
