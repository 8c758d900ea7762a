package napi

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrNoInterface: the listen address is a wildcard or no interface holds it,
// so there is no single interface whose NAPIs a poll mode could tune.
var ErrNoInterface = errors.New("no single interface for this address")

// InterfaceByAddr finds the interface holding host (an IP literal, as given
// to -l), in the calling thread's network namespace. Wildcards ("", 0.0.0.0,
// ::) match every interface and return ErrNoInterface; the caller then runs
// the mode as base or asks for --interface.
func InterfaceByAddr(host string) (*net.Interface, error) {
	if host == "" {
		return nil, fmt.Errorf("listen address is the wildcard: %w (pass --interface)", ErrNoInterface)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("listen address %q is not an IP address: %w", host, err)
	}
	ip = ip.Unmap()
	if ip.IsUnspecified() {
		return nil, fmt.Errorf("listen address %s is the wildcard: %w (pass --interface)", ip, ErrNoInterface)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	for i := range ifs {
		addrs, err := ifs[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if got, ok := netip.AddrFromSlice(p.IP); ok && got.Unmap() == ip {
					return &ifs[i], nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no interface holds %s in this network namespace: %w", ip, ErrNoInterface)
}
