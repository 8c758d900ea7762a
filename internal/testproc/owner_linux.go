package testproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// holdsListenerFD reports whether one of pid's descriptors is a socket
// listening on port, by borrowing each of its sockets (pidfd_getfd) and
// asking it. It costs a few system calls, where the socket tables of
// /proc/PID/net cost the kernel a walk over every socket of the namespace,
// thousands in TIME_WAIT during a test run. It fails where borrowing is
// not allowed (no ptrace access to pid, a kernel before 5.6).
func holdsListenerFD(pid, port int) (bool, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(pidfd)
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:") {
			continue
		}
		target, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fd, err := unix.PidfdGetfd(pidfd, target, 0)
		if err != nil {
			return false, err
		}
		listening, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		sa, _ := unix.Getsockname(fd)
		unix.Close(fd)
		if listening != 1 {
			continue
		}
		switch a := sa.(type) {
		case *unix.SockaddrInet4:
			if a.Port == port {
				return true, nil
			}
		case *unix.SockaddrInet6:
			if a.Port == port {
				return true, nil
			}
		}
	}
	return false, nil
}
