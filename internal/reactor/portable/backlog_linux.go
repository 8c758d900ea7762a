package portable

import (
	"net"
	"syscall"
)

// setBacklog applies -b to a listener the net package created with the
// system default backlog: on Linux, listen(2) on a socket that is already
// listening only updates its backlog (still capped by net.core.somaxconn).
func setBacklog(ln net.Listener, backlog int) error {
	if backlog <= 0 {
		return nil
	}
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), backlog) }); err != nil {
		return err
	}
	return lerr
}
