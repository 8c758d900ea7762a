//go:build unix

package reactor

import (
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/gocached/gocached/internal/protocol"
)

// ListenerProtocols returns the lookup protocol.Env.ListenerBinding wants
// for bindings whose -l entries carry "proto[...]:" prefixes: a connection's
// local address (getsockname) names the listener that accepted it, the
// wildcard of its family and port standing in for any address. nil when no
// entry has a prefix, so that connections pay nothing then. Every engine's
// connections are served by it, since the Session asks when it opens.
func ListenerProtocols(binds []Binding) func(fd int) (protocol.Binding, bool) {
	byAddr := map[netip.AddrPort]protocol.Binding{}
	for _, b := range binds {
		if b.Proto == "" {
			continue
		}
		ip, ok := netip.AddrFromSlice(b.IP)
		if !ok {
			continue
		}
		byAddr[netip.AddrPortFrom(ip.Unmap(), uint16(b.Port))] = protoBinding(b.Proto)
	}
	if len(byAddr) == 0 {
		return nil
	}
	return func(fd int) (protocol.Binding, bool) {
		sa, err := unix.Getsockname(fd)
		if err != nil {
			return 0, false
		}
		var local netip.AddrPort
		wildcard := netip.IPv4Unspecified()
		switch a := sa.(type) {
		case *unix.SockaddrInet4:
			local = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
		case *unix.SockaddrInet6:
			local = netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
			if !local.Addr().Is4() {
				wildcard = netip.IPv6Unspecified()
			}
		default:
			return 0, false
		}
		if b, ok := byAddr[local]; ok {
			return b, true
		}
		b, ok := byAddr[netip.AddrPortFrom(wildcard, local.Port())]
		return b, ok
	}
}

// protoBinding is the protocol.Binding a "proto[...]" name stands for.
func protoBinding(name string) protocol.Binding {
	switch name {
	case "ascii":
		return protocol.BindingASCII
	case "binary":
		return protocol.BindingBinary
	}
	return protocol.BindingAuto
}
