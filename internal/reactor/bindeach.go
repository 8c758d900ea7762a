package reactor

import (
	"errors"
	"syscall"
)

// BindEach binds every binding with bind, which returns the port it got,
// under memcached's rules for one -l entry (server_socket in memcached.c):
//
//   - the bindings of one entry share the port the first bound one got, so
//     -p 0 gives a name's every address one port;
//   - an address whose port is taken (EADDRINUSE) is skipped, as long as
//     another address of the same entry binds: the wildcard with IPv4's
//     port held by another program serves IPv6 alone, as memcached does;
//   - the IPv6 wildcard is skipped on a host without IPv6.
//
// Any other failure, or an entry none of whose addresses bound, ends the
// binding with bind's error (for an entry, the last address's).
func BindEach(binds []Binding, bind func(b Binding) (port int, err error)) error {
	ports := make(map[int]int) // -l entry -> the port its first socket got
	var inUse error            // the entry's last EADDRINUSE, while nothing of it bound
	for i, b := range binds {
		if p, ok := ports[b.Entry]; ok {
			b.Port = p
		}
		port, err := bind(b)
		switch {
		case err == nil:
			ports[b.Entry] = port
		case b.Wildcard() && b.V6() && noIPv6(err):
		case errors.Is(err, syscall.EADDRINUSE):
			inUse = err
		default:
			return err
		}
		if i+1 == len(binds) || binds[i+1].Entry != b.Entry {
			if _, bound := ports[b.Entry]; !bound && inUse != nil {
				return inUse
			}
			inUse = nil
		}
	}
	return nil
}

// noIPv6 reports whether err says the host has no IPv6 to bind.
func noIPv6(err error) bool {
	return errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EADDRNOTAVAIL) ||
		errors.Is(err, syscall.EPROTONOSUPPORT)
}
