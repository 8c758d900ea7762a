package reactor

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// commonListenAddrs turns memcached's -l value and -p into the TCP addresses
// to bind. Like memcached, -l is a comma-separated list; each entry is a host
// (IPv4, IPv6 with or without brackets, or a name) that gets port, or a
// host:port pair that keeps its own port. An empty -l means every interface.
func commonListenAddrs(listen string, port int) ([]string, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("reactor: invalid port %d", port)
	}
	ps := strconv.Itoa(port)
	if strings.TrimSpace(listen) == "" {
		return []string{net.JoinHostPort("", ps)}, nil
	}
	var addrs []string
	for _, entry := range strings.Split(listen, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("reactor: empty entry in listen list %q", listen)
		}
		addr, err := commonListenEntry(entry, ps)
		if err != nil {
			return nil, err
		}
		// Whatever the entry looked like, the result must be a plain host:port.
		if host, _, err := net.SplitHostPort(addr); err != nil || strings.ContainsAny(host, "[] \t") {
			return nil, fmt.Errorf("reactor: invalid listen address %q", entry)
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

func commonListenEntry(entry, port string) (string, error) {
	switch {
	case strings.HasPrefix(entry, "["):
		if strings.HasSuffix(entry, "]") { // [v6] without a port
			return net.JoinHostPort(entry[1:len(entry)-1], port), nil
		}
		host, p, err := net.SplitHostPort(entry)
		if err != nil {
			return "", fmt.Errorf("reactor: listen address %q: %w", entry, err)
		}
		return commonJoinChecked(entry, host, p)
	case strings.Count(entry, ":") > 1: // bare IPv6 literal
		return net.JoinHostPort(entry, port), nil
	case strings.Contains(entry, ":"):
		host, p, err := net.SplitHostPort(entry)
		if err != nil {
			return "", fmt.Errorf("reactor: listen address %q: %w", entry, err)
		}
		return commonJoinChecked(entry, host, p)
	}
	return net.JoinHostPort(entry, port), nil
}

func commonJoinChecked(entry, host, port string) (string, error) {
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("reactor: listen address %q: invalid port", entry)
	}
	return net.JoinHostPort(host, port), nil
}

// commonAddrString formats a TCP address the way memcached's `stats conns`
// does: "tcp:1.2.3.4:11211" or "tcp6:[::1]:11211".
func commonAddrString(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta == nil {
		if a == nil {
			return "unknown"
		}
		return a.Network() + ":" + a.String()
	}
	if ta.IP.To4() == nil && len(ta.IP) == net.IPv6len {
		return "tcp6:" + ta.String()
	}
	return "tcp:" + ta.String()
}
