//go:build linux

package testbed

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gocached/gocached/internal/probe"
)

// ConnNAPIID returns SO_INCOMING_NAPI_ID of c's socket.
func ConnNAPIID(c *net.TCPConn) (uint32, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var id uint32
	var gerr error
	if err := rc.Control(func(fd uintptr) { id, gerr = probe.IncomingNAPIID(int(fd)) }); err != nil {
		return 0, err
	}
	return id, gerr
}

// ObserveNAPIIDs opens conns TCP connections from the client namespace to a
// listener in the server namespace, exchanges a few bytes on each (so the
// server side has received data through a NAPI), and returns the
// SO_INCOMING_NAPI_ID of each accepted socket, in accept order. veth spreads
// flows over its rx queues, so enough connections see every NAPI.
func (b *Bed) ObserveNAPIIDs(conns int) ([]uint32, error) {
	var ln *net.TCPListener
	if err := InNS(b.ServerNS, func() error {
		l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.ParseIP(b.ServerIP)})
		ln = l
		return err
	}); err != nil {
		return nil, fmt.Errorf("listen in %s: %w", b.ServerNS, err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	deadline := time.Now().Add(10 * time.Second)
	if err := ln.SetDeadline(deadline); err != nil {
		return nil, err
	}

	type dialResult struct{ err error }
	dialed := make(chan dialResult, 1)
	go func() {
		dialed <- dialResult{InNS(b.ClientNS, func() error {
			for i := 0; i < conns; i++ {
				if err := pingPong(addr, deadline); err != nil {
					return fmt.Errorf("connection %d: %w", i, err)
				}
			}
			return nil
		})}
	}()

	ids := make([]uint32, 0, conns)
	var err error
	for i := 0; i < conns; i++ {
		var id uint32
		if id, err = serveOne(ln, deadline); err != nil {
			err = fmt.Errorf("accepted connection %d: %w", i, err)
			break
		}
		ids = append(ids, id)
	}
	if err != nil {
		ln.Close() // unblock the dialer if it waits on us
	}
	if d := <-dialed; d.err != nil && err == nil {
		err = d.err
	}
	return ids, err
}

// pingPong is the client half: send "ping", expect "pong".
func pingPong(addr string, deadline time.Time) error {
	c, err := net.DialTimeout("tcp4", addr, time.Until(deadline))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "pong" {
		return fmt.Errorf("got %q, want pong", buf)
	}
	return nil
}

// serveOne is the server half: accept, read "ping", note the NAPI ID, answer.
func serveOne(ln *net.TCPListener, deadline time.Time) (uint32, error) {
	c, err := ln.AcceptTCP()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.SetDeadline(deadline); err != nil {
		return 0, err
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil {
		return 0, err
	}
	if string(buf) != "ping" {
		return 0, fmt.Errorf("got %q, want ping", buf)
	}
	id, err := ConnNAPIID(c)
	if err != nil {
		return 0, err
	}
	if _, err := c.Write([]byte("pong")); err != nil {
		return 0, err
	}
	return id, nil
}
