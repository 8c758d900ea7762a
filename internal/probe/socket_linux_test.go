package probe

import (
	"net"
	"testing"
)

func TestIncomingNAPIIDSupported(t *testing.T) {
	v, err := Uname()
	if err != nil {
		t.Fatal(err)
	}
	r := IncomingNAPIIDSupported()
	if v.AtLeast(4, 12) && !r.Supported {
		t.Fatalf("kernel %s should answer SO_INCOMING_NAPI_ID: %s", v, r)
	}
	t.Logf("%s", r)
	p := PreferBusyPollSupported()
	if v.AtLeast(5, 11) && !p.Supported {
		t.Fatalf("kernel %s should accept SO_PREFER_BUSY_POLL: %s", v, p)
	}
	t.Logf("%s", p)
}

// Loopback has no NAPI, so accepted loopback sockets must report id 0; a
// nonzero id here would mean the probe reads the wrong option.
func TestIncomingNAPIIDLoopbackIsZero(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err == nil {
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var id uint32
	var gerr error
	if err := rc.Control(func(fd uintptr) { id, gerr = IncomingNAPIID(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil || id != 0 {
		t.Fatalf("loopback SO_INCOMING_NAPI_ID = %d, %v; want 0", id, gerr)
	}
}

func BenchmarkIncomingNAPIID(b *testing.B) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rc.Control(func(fd uintptr) {
		for b.Loop() {
			if _, err := IncomingNAPIID(int(fd)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
