package testproc

import (
	"bytes"
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
// under it). It asks pid's own sockets (holdsListenerFD) and, where it may
// not borrow them, the namespace's socket tables (holdsListener); where
// neither can tell (not Linux, /proc unreadable) the dial is trusted.
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
	if owns, err := holdsListenerFD(pid, port); err == nil {
		return owns
	}
	owns, err := holdsListener(pid, port)
	if errors.Is(err, fs.ErrPermission) {
		return true
	}
	return err == nil && owns
}

// holdsListener looks up the sockets listening on port in pid's network
// namespace (/proc/PID/net/tcp, tcp6) and reports whether one of them is
// among pid's descriptors: holdsListenerFD's fallback. The tables list every socket of the namespace,
// thousands in TIME_WAIT during a test run, so they are searched for the
// listening line's fixed text (":PORT <any remote> 0A ") rather than split
// line by line.
func holdsListener(pid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, table := range []struct{ name, anyRemote string }{
		{"tcp", "00000000:0000"},
		{"tcp6", strings.Repeat("0", 32) + ":0000"},
	} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table.name))
		if err != nil {
			if table.name == "tcp6" && errors.Is(err, fs.ErrNotExist) {
				continue // no IPv6 in this kernel
			}
			return false, err
		}
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		pat := []byte(fmt.Sprintf(":%04X %s 0A ", port, table.anyRemote)) // 0A: TCP_LISTEN
		for {
			i := bytes.Index(b, pat)
			if i < 0 {
				break
			}
			start := bytes.LastIndexByte(b[:i], '\n') + 1
			end := i + bytes.IndexByte(b[i:], '\n')
			if end < i {
				end = len(b)
			}
			if f := bytes.Fields(b[start:end]); len(f) >= 10 {
				inodes["socket:["+string(f[9])+"]"] = true
			}
			b = b[end:]
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
