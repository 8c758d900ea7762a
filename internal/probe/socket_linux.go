package probe

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// IncomingNAPIID returns SO_INCOMING_NAPI_ID of socket fd: the NAPI instance
// that delivered its last packet, 0 when unknown (loopback, no traffic yet,
// or a driver without NAPI).
func IncomingNAPIID(fd int) (uint32, error) {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_INCOMING_NAPI_ID)
	if err != nil {
		return 0, fmt.Errorf("getsockopt SO_INCOMING_NAPI_ID: %w", err)
	}
	return uint32(v), nil
}

// withTCPSocket runs fn on a fresh, unconnected TCP socket.
func withTCPSocket(fn func(fd int) error) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	}
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	return fn(fd)
}

// IncomingNAPIIDSupported checks that the kernel answers SO_INCOMING_NAPI_ID
// (Linux 4.12+, CONFIG_NET_RX_BUSY_POLL), which connection routing needs.
func IncomingNAPIIDSupported() Result {
	r := Result{Feature: "SO_INCOMING_NAPI_ID"}
	err := withTCPSocket(func(fd int) error {
		_, err := IncomingNAPIID(fd)
		return err
	})
	switch {
	case err == nil:
		r.Supported = true
		r.Sentence = "readable; connections can be routed by NAPI ID (loopback sockets report 0)"
	case errors.Is(err, unix.ENOPROTOOPT):
		r.Err = err
		r.Sentence = "the kernel does not know SO_INCOMING_NAPI_ID (needs 4.12+ with CONFIG_NET_RX_BUSY_POLL); connections cannot be routed by NAPI"
	default:
		r.Err = err
		r.Sentence = "probe failed: " + err.Error()
	}
	return r
}

// PreferBusyPollSupported checks the per-socket preferred-busy-poll options
// (Linux 5.11+) by setting them on a throwaway socket.
func PreferBusyPollSupported() Result {
	r := Result{Feature: "SO_PREFER_BUSY_POLL"}
	err := withTCPSocket(func(fd int) error {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PREFER_BUSY_POLL, 1); err != nil {
			return fmt.Errorf("setsockopt SO_PREFER_BUSY_POLL: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL_BUDGET, 8); err != nil {
			return fmt.Errorf("setsockopt SO_BUSY_POLL_BUDGET: %w", err)
		}
		return nil
	})
	switch {
	case err == nil:
		r.Supported = true
		r.Sentence = "SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET accepted"
	case errors.Is(err, unix.ENOPROTOOPT):
		r.Err = err
		r.Sentence = "the kernel lacks preferred busy polling (needs 5.11+): " + err.Error()
	default:
		r.Err = err
		r.Sentence = "probe failed: " + err.Error()
	}
	return r
}
