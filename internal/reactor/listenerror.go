package reactor

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// ListenError is a listening socket that could not be set up: an -l entry
// that does not parse or resolve, an address or port that cannot be bound,
// a -s path. memcached exits 71 (EX_OSERR) for these, naming what it could
// not listen on; every engine, and the UDP server, return this type so
// the command can do the same.
type ListenError struct {
	Transport string // "tcp", "udp" or "unix"
	Err       error
}

func (e *ListenError) Error() string { return e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// listenErr wraps err (nil stays nil) as a ListenError of transport.
func listenErr(transport string, err error) error {
	if err == nil {
		return nil
	}
	var le *ListenError
	if errors.As(err, &le) {
		return err
	}
	return &ListenError{Transport: transport, Err: err}
}

// TCPListenError, UDPListenError and UnixListenError wrap an engine's
// listener setup failure (nil stays nil).
func TCPListenError(err error) error  { return listenErr("tcp", err) }
func UDPListenError(err error) error  { return listenErr("udp", err) }
func UnixListenError(err error) error { return listenErr("unix", err) }

// MemcachedMessage is memcached's line for the failure (after its own
// line for an entry it refuses, ListenSpecError): which listener
// (the whole -l string when one was given, else the port; the path for
// -s) and why, in C's strerror wording where the cause is an errno.
func (e *ListenError) MemcachedMessage(listen string, port int, path string) string {
	var what string
	switch {
	case e.Transport == "unix":
		what = "UNIX socket: " + path
	case listen != "":
		what = "one of interface(s) " + listen
	case e.Transport == "udp":
		what = fmt.Sprintf("UDP port %d", port)
	default:
		what = fmt.Sprintf("TCP port %d", port)
	}
	var spec *ListenSpecError
	if errors.As(e.Err, &spec) {
		// memcached's own line first; errno is still 0 for its perror.
		return spec.Line + "\nfailed to listen on " + what + ": Success"
	}
	return "failed to listen on " + what + ": " + e.reason()
}

// reason is the cause as strerror words it: Go's errno text is C's with
// the first letter lowered. A name that does not resolve gets
// getaddrinfo's words; anything else is given as Go words it.
func (e *ListenError) reason() string {
	var dnsErr *net.DNSError
	if errors.As(e.Err, &dnsErr) && dnsErr.IsNotFound {
		return "Name or service not known"
	}
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return e.Err.Error()
}
