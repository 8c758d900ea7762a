//go:build unix

package reactor

import (
	"time"

	"golang.org/x/sys/unix"
)

// RejectFD refuses an accepted, non-blocking client socket beyond -c with
// memcached's message and an orderly close (see RejectConn). The socket is
// fresh, so the message fits its send buffer.
func RejectFD(fd int) {
	if _, err := unix.Write(fd, RejectMessage); err != nil {
		unix.Close(fd)
		return
	}
	select {
	case lingering <- struct{}{}:
	default:
		unix.Close(fd)
		return
	}
	go func() {
		defer func() { <-lingering }()
		lingerClose(fd)
	}()
}

// lingerClose sends FIN, drains what the client sends until it closes, the
// linger time passes or rejectDrainMax bytes came, then closes fd.
func lingerClose(fd int) {
	defer unix.Close(fd)
	if unix.Shutdown(fd, unix.SHUT_WR) != nil {
		return
	}
	deadline := time.Now().Add(rejectLinger)
	buf := make([]byte, 4096)
	for drained := 0; drained < rejectDrainMax; {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(pfd, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR || n == 0 {
			return
		}
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
		case err != nil || n == 0:
			return // closed by the client, or an error: done
		default:
			drained += n
		}
	}
}
