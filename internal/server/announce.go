package server

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gocached/gocached/internal/protocol"
)

// announceListeners writes memcached's -vv start-up lines, one per
// listening socket by descriptor: "<23 server listening (auto-negotiate)"
// for TCP and unix sockets (the -B binding in parentheses), then
// "<26 server listening (udp)" for UDP ones. The stream sockets are found
// the way `stats conns` lists them, so every engine is covered.
func announceListeners(w io.Writer, eng protocol.Server, binding string, udp io.Closer) {
	var fds []int
	eng.GroupStats("conns", func(name, value string) {
		id, field, ok := strings.Cut(name, ":")
		if !ok || field != "state" || value != "conn_listening" {
			return
		}
		if fd, err := strconv.Atoi(id); err == nil {
			fds = append(fds, fd)
		}
	})
	sort.Ints(fds)
	var b strings.Builder
	for _, fd := range fds {
		fmt.Fprintf(&b, "<%d server listening (%s)\n", fd, binding)
	}
	if u, ok := udp.(interface{ Descriptors() []int }); ok {
		for _, fd := range u.Descriptors() {
			fmt.Fprintf(&b, "<%d server listening (udp)\n", fd)
		}
	}
	io.WriteString(w, b.String())
}
