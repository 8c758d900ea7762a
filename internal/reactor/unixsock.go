package reactor

import (
	"fmt"
	"net"
	"os"
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
