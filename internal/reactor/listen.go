package reactor

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ListenAddr is one entry of memcached's -l list with its port.
type ListenAddr struct {
	Host string // as given, without brackets or port; "" = every interface
	Port int
	// TLS is the entry's TLS prefix (memcached's "notls:", "btls:",
	// "mtls:"), which with -Z overrides how its clients are served.
	TLS ListenTLS
	// Proto is memcached's "proto[NAME]:" prefix, the protocol this
	// listener's clients speak whatever -B says: "ascii", "binary" or
	// "negotiating"; "" when not given (listenprefix.go).
	Proto string
}

// String is the entry as host:port ("[::1]:11211", ":11211").
func (a ListenAddr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

// ParseListen turns -l and -p into listen addresses, checking syntax only
// (names are resolved by Bindings). Like memcached, -l is a list separated
// by commas or semicolons (memcached splits it with strtok_r(list, ";,"), so
// empty entries, as in "127.0.0.1," or "a,,b", are skipped); each entry is a
// host (IPv4, IPv6 with or without brackets, or a name) that gets port, or
// host:port / [v6]:port that keeps its own port. An empty -l means every
// interface; a list of nothing but separators is refused (memcached would
// serve on no address at all).
func ParseListen(listen string, port int) ([]ListenAddr, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("invalid port %d", port)
	}
	if strings.TrimSpace(listen) == "" {
		return []ListenAddr{{Port: port}}, nil
	}
	var addrs []ListenAddr
	entries := strings.FieldsFunc(listen, func(r rune) bool { return r == ',' || r == ';' })
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		a, err := parseListenEntry(entry, port, entries[0])
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no address in listen list %q", listen)
	}
	return addrs, nil
}

func parseListenEntry(entry string, port int, first string) (ListenAddr, error) {
	entry, mode := cutTLSPrefix(entry)
	entry, proto, err := cutListenPrefixes(entry, first)
	if err != nil {
		return ListenAddr{}, err
	}
	a, err := parseHostPort(entry, port)
	a.TLS, a.Proto = mode, proto
	return a, err
}

func parseHostPort(entry string, port int) (ListenAddr, error) {
	host := entry
	switch {
	case strings.HasPrefix(entry, "[") && strings.HasSuffix(entry, "]"): // [v6]
		host = entry[1 : len(entry)-1]
	case strings.HasPrefix(entry, "[") || strings.Count(entry, ":") == 1: // [v6]:port, host:port
		h, p, err := net.SplitHostPort(entry)
		if err != nil {
			return ListenAddr{}, fmt.Errorf("listen address %q: %w", entry, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return ListenAddr{}, fmt.Errorf("listen address %q: invalid port", entry)
		}
		host, port = h, n
	}
	// Anything left is a host name or an IP literal (a bare IPv6 has colons).
	if host == "" || strings.ContainsAny(host, "[] \t/") ||
		(strings.Contains(host, ":") && net.ParseIP(host) == nil) {
		return ListenAddr{}, fmt.Errorf("invalid listen address %q", entry)
	}
	return ListenAddr{Host: host, Port: port}, nil
}

// Binding is one socket to bind: an address family and an IP.
type Binding struct {
	IP   net.IP // 0.0.0.0 or :: for the wildcard
	Port int
	// Entry is the index of the -l entry it came from. Bindings of one entry
	// share a port: with port 0, the first one bound picks it for the rest.
	Entry int
	TLS   ListenTLS // the entry's TLS prefix
	Proto string    // the entry's "proto[NAME]:" prefix, "" if none
}

// V6 reports whether b needs an AF_INET6 socket.
func (b Binding) V6() bool { return b.IP.To4() == nil }

// Wildcard reports whether b is the all-interfaces address of its family.
func (b Binding) Wildcard() bool { return b.IP.IsUnspecified() }

// Bindings resolves listen addresses to the sockets memcached would bind: the
// wildcard is one IPv4 socket (0.0.0.0) and one IPv6-only socket (::), a name
// is every address it resolves to, an IP literal is itself. Every engine
// binds exactly these, so `stats conns` and the connection counts agree.
func Bindings(addrs []ListenAddr, lookup func(host string) ([]net.IP, error)) ([]Binding, error) {
	if lookup == nil {
		lookup = net.LookupIP
	}
	var out []Binding
	seen := make(map[string]bool)
	for i, a := range addrs {
		var ips []net.IP
		switch ip := net.ParseIP(a.Host); {
		case a.Host == "":
			ips = []net.IP{net.IPv4zero.To4(), net.IPv6unspecified}
		case ip != nil:
			ips = []net.IP{ip}
		default:
			found, err := lookup(a.Host)
			if err != nil {
				return nil, fmt.Errorf("listen address %q: %w", a.Host, err)
			}
			if len(found) == 0 {
				return nil, fmt.Errorf("listen address %q: no addresses", a.Host)
			}
			ips = found
		}
		for _, ip := range ips {
			if v4 := ip.To4(); v4 != nil {
				ip = v4
			}
			key := net.JoinHostPort(ip.String(), strconv.Itoa(a.Port))
			if seen[key] && a.Port != 0 {
				continue // "127.0.0.1,localhost" binds 127.0.0.1 once
			}
			seen[key] = true
			out = append(out, Binding{IP: ip, Port: a.Port, Entry: i, TLS: a.TLS, Proto: a.Proto})
		}
	}
	return out, nil
}
