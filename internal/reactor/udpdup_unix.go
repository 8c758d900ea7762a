//go:build unix

package reactor

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// dupUDP is another descriptor of c's socket, sharing its receive queue.
// net.FilePacketConn takes the lowest free descriptor for its own dup, so
// the one handed to it is first parked out of the way, at the top of the
// open files limit: the descriptors of a socket then come out
// consecutive, as memcached's dups do, and a client connected next gets a
// higher number than all of them (memcached's watcher_connid.t reads a
// client's id as the highest descriptor in `stats conns`).
func dupUDP(c *net.UDPConn) (*net.UDPConn, error) {
	fd := socketFD(c)
	parked, err := -1, error(nil)
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur > 1 && lim.Cur < 1<<31 {
		parked, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, int(lim.Cur-1))
	}
	if parked < 0 { // the top is taken: anywhere
		parked, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(parked), "udp")
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
