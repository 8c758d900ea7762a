package testproc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// ownsListener reports whether process pid itself holds a TCP socket
// listening on addr's port. A successful dial proves only that something
// listens there: a port FreePort handed out is free only until somebody
// binds it, and another test's server (or its own FreePort probe) may have
// taken it first. The server we started then fails to bind and exits, and
// a probe that trusted the dial would hand its test someone else's server
// (TestConnLimitWaits/go read a reset from a listener that was closed
// under it). Where this cannot be checked (not Linux, /proc unreadable)
// the dial is trusted as before.
func ownsListener(pid int, addr string) bool {
	if runtime.GOOS != "linux" {
		return true
	}
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return true
	}
	owns, err := holdsListener(pid, port)
	if errors.Is(err, fs.ErrPermission) {
		return true
	}
	return err == nil && owns
}

// holdsListener looks up the sockets listening on port in pid's network
// namespace (/proc/PID/net/tcp, tcp6) and reports whether one of them is
// among pid's descriptors.
func holdsListener(pid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, name))
		if err != nil {
			if name == "tcp6" && errors.Is(err, fs.ErrNotExist) {
				continue // no IPv6 in this kernel
			}
			return false, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && inodes[link] {
			return true, nil
		}
	}
	return false, nil
}
