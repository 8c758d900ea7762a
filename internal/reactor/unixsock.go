package reactor

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
)

// DefaultUnixMask is memcached's -a default: only the owner may connect.
const DefaultUnixMask os.FileMode = 0o700

// PrepareUnixSocket clears the way for binding path as memcached does: a
// socket file left by an earlier run is removed; anything else there is an
// error (a regular file is never deleted by accident).
func PrepareUnixSocket(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("unix socket %s: %w", path, err)
	case fi.Mode()&os.ModeSocket == 0:
		return fmt.Errorf("unix socket %s: a file that is not a socket is in the way", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("unix socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}

// AsUnixSocketOwner runs fn through owner (Config.UnixSocketOwner), or
// directly when owner is nil.
func AsUnixSocketOwner(owner func(fn func() error) error, fn func() error) error {
	if owner == nil {
		return fn()
	}
	return owner(fn)
}

// SetUnixMask gives the bound socket file -a's permissions, which decide who
// may connect.
func SetUnixMask(path string, mask os.FileMode) error {
	if mask == 0 {
		mask = DefaultUnixMask
	}
	if err := os.Chmod(path, mask&os.ModePerm); err != nil {
		return fmt.Errorf("unix socket %s: chmod %o: %w", path, mask, err)
	}
	return nil
}

// UnixAddrString formats a unix socket address as memcached's `stats conns`
// does: "unix:/path", and for the unnamed peer of a client "?:<AF 0>".
func UnixAddrString(name string) string {
	if name == "" || name == "@" {
		return "?:<AF 0>"
	}
	return "unix:" + name
}

func unixAddrString(a *net.UnixAddr) string {
	if a == nil {
		return UnixAddrString("")
	}
	return UnixAddrString(a.Name)
}

// UnixSpreader deals the connections of the unix socket listener out to the
// reactors in turn. Only one reactor accepts on that listener, as
// memcached's single dispatcher does: reactors that each polled a dup of it
// would all wake for every connection, and an accept4 that loses the race
// still reserves the lowest free descriptor while it runs, so a client
// could get a higher fd than one that connected after it. memcached's tests
// (watcher_connid.t) read a client's own id from `stats conns` as the
// highest fd, which needs fds handed out in connection order.
type UnixSpreader struct {
	next atomic.Uint32
}

// Next is the reactor, of n, that serves the next unix connection.
func (s *UnixSpreader) Next(n int) int {
	if n <= 1 {
		return 0
	}
	return int((s.next.Add(1) - 1) % uint32(n))
}
