package portable

import (
	"crypto/tls"
	"syscall"
)

// fdOf returns the OS descriptor behind a net.Conn or net.Listener, or -1
// when it has none. `stats conns` names connections by descriptor as
// memcached does.
func fdOf(v any) int {
	if tc, ok := v.(*tls.Conn); ok {
		v = tc.NetConn()
	}
	sc, ok := v.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1
	}
	return fd
}
