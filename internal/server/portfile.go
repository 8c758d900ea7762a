package server

import (
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gocached/gocached/internal/protocol"
)

// PortFileEnv names the file memcached writes its bound ports to once it
// listens (its test suite starts servers on ephemeral ports and reads them
// back from there).
const PortFileEnv = "MEMCACHED_PORT_FILENAME"

// writePortFile writes memcached's port file: one line per listening
// socket, "TCP INET: 11211", "TCP INET6: 11211", "UDP INET: 11212", into
// path+".lck" first and then renamed, so a reader polling for the file
// never sees half of it. An empty path writes nothing.
func writePortFile(path string, eng protocol.Server, udp io.Closer) error {
	if path == "" {
		return nil
	}
	var lines []string
	addrs := map[string]string{}
	listening := map[string]bool{}
	eng.GroupStats("conns", func(name, value string) {
		id, field, ok := strings.Cut(name, ":")
		switch {
		case !ok:
		case field == "addr":
			addrs[id] = value
		case field == "state" && value == "conn_listening":
			listening[id] = true
		}
	})
	ids := make([]string, 0, len(listening))
	for id := range listening {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { a, _ := strconv.Atoi(ids[i]); b, _ := strconv.Atoi(ids[j]); return a < b })
	for _, id := range ids {
		a := addrs[id]
		family, hostport, ok := strings.Cut(a, ":")
		if !ok || (family != "tcp" && family != "tcp6") {
			continue // a unix socket has no port
		}
		if _, port, err := net.SplitHostPort(hostport); err == nil {
			lines = append(lines, fmt.Sprintf("TCP INET%s: %s", strings.TrimPrefix(family, "tcp"), port))
		}
	}
	if u, ok := udp.(interface{ LocalAddrs() []net.Addr }); ok {
		for _, a := range u.LocalAddrs() {
			if ua, ok := a.(*net.UDPAddr); ok {
				six := ""
				if ua.IP.To4() == nil {
					six = "6"
				}
				lines = append(lines, fmt.Sprintf("UDP INET%s: %d", six, ua.Port))
			}
		}
	}
	tmp := path + ".lck"
	body := strings.Join(lines, "\n")
	if body != "" {
		body += "\n"
	}
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
