package reactor

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

func TestListenErrorMemcachedMessage(t *testing.T) {
	inUse := fmt.Errorf("epoll: bind 127.0.0.1:11211: %w", syscall.EADDRINUSE)
	noHost := fmt.Errorf("epoll: %w", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true})
	for _, tc := range []struct {
		err          error
		listen, path string
		port         int
		want         string
	}{
		{TCPListenError(inUse), "127.0.0.1", "", 11211, "failed to listen on one of interface(s) 127.0.0.1: Address already in use"},
		{TCPListenError(inUse), "", "", 11211, "failed to listen on TCP port 11211: Address already in use"},
		{UDPListenError(inUse), "", "", 11212, "failed to listen on UDP port 11212: Address already in use"},
		{UDPListenError(inUse), "a,b", "", 11212, "failed to listen on one of interface(s) a,b: Address already in use"},
		{UnixListenError(fmt.Errorf("bind: %w", syscall.ENOENT)), "", "/x/s", 0, "failed to listen on UNIX socket: /x/s: No such file or directory"},
		{TCPListenError(noHost), "x.invalid", "", 1, "failed to listen on one of interface(s) x.invalid: Name or service not known"},
		{TCPListenError(errors.New("odd")), "h", "", 1, "failed to listen on one of interface(s) h: odd"},
		// A ListenError wrapped again keeps its transport.
		{TCPListenError(UDPListenError(inUse)), "", "", 5, "failed to listen on UDP port 5: Address already in use"},
	} {
		var le *ListenError
		if !errors.As(tc.err, &le) {
			t.Fatalf("%v: not a ListenError", tc.err)
		}
		if got := le.MemcachedMessage(tc.listen, tc.port, tc.path); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.err, got, tc.want)
		}
	}
	if TCPListenError(nil) != nil {
		t.Error("TCPListenError(nil) is not nil")
	}
}
