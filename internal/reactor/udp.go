package reactor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// memcached's UDP protocol (-U): every datagram starts with an 8-byte frame
// header of four big-endian 16-bit fields (request ID, sequence number,
// datagram count, reserved). A request must fit one datagram; the reply is
// cut into datagrams of at most udpMaxDatagram bytes, header included, that
// repeat the request ID and carry their sequence number and the count.
// UDP is served the same way whatever the engine, by UDPServer.
const (
	udpHeaderLen   = 8
	udpMaxDatagram = 1400 // memcached's UDP_MAX_PAYLOAD_SIZE
	udpMaxPayload  = udpMaxDatagram - udpHeaderLen
	// udpMaxRequest bounds a request datagram (the IPv4 UDP maximum).
	udpMaxRequest = 65535
)

// UDPFrames turns one request datagram into its reply datagrams, running
// the request through sess. Like memcached it ignores datagrams shorter
// than a header or that claim to be part of a multi-datagram request.
// Replies to several requests in one datagram go out as one message
// (memcached sends one message per request). buf is scratch space for the
// reply; the returned datagrams are slices of the returned scratch.
func UDPFrames(sess Session, pkt, buf []byte) (frames [][]byte, scratch []byte, err error) {
	if len(pkt) < udpHeaderLen || binary.BigEndian.Uint16(pkt[4:6]) != 1 {
		return nil, buf, nil
	}
	id := binary.BigEndian.Uint16(pkt[0:2])
	in := pkt[udpHeaderLen:]
	out := buf[:0]
	for len(in) > 0 || sess.Pending() {
		before := len(out)
		n, reply, st, err := RunSession(sess, in, out)
		if err != nil {
			return nil, out, err
		}
		out, in = reply, in[n:]
		// A reply in chunks (Pending) is gathered whole: a datagram
		// reply cannot wait for the client. Past what the sequence
		// numbers can carry, the rest would be cut anyway.
		resume := st != protocol.Close && Resume(sess.Pending(), n, len(out)-before) &&
			len(out) < 0xffff*udpMaxPayload
		if !resume && (st != protocol.Yield || n == 0) {
			break // NeedMore: the rest is an incomplete request; Close: nothing more
		}
	}
	sess.Reset() // each datagram stands alone
	if len(out) == 0 {
		return nil, out, nil
	}
	count := (len(out) + udpMaxPayload - 1) / udpMaxPayload
	if count > 0xffff {
		count, out = 0xffff, out[:0xffff*udpMaxPayload]
	}
	// Lay the datagrams out back to back after the reply: header, chunk.
	need := len(out) + count*(udpMaxDatagram)
	if cap(out) < need {
		grown := make([]byte, len(out), need)
		copy(grown, out)
		out = grown
	}
	body := out[:len(out)]
	for seq := range count {
		chunk := body[seq*udpMaxPayload : min((seq+1)*udpMaxPayload, len(body))]
		start := len(out)
		out = binary.BigEndian.AppendUint16(out, id)
		out = binary.BigEndian.AppendUint16(out, uint16(seq))
		out = binary.BigEndian.AppendUint16(out, uint16(count))
		out = binary.BigEndian.AppendUint16(out, 0)
		out = append(out, chunk...)
		frames = append(frames, out[start:])
	}
	return frames, out, nil
}

// UDPServer serves -U on every address of -l, one goroutine per socket,
// each with its own Session.
type UDPServer struct {
	started    int64 // unix seconds, for stats conns
	socks      []*net.UDPConn
	newSession func() Session
	wg         sync.WaitGroup
	closeOnce  sync.Once
}

// ListenUDP binds the UDP sockets: the addresses -l would bind for TCP,
// at port.
func ListenUDP(listen string, port int, newSession func() Session) (*UDPServer, error) {
	addrs, err := ParseListen(listen, port)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	for i := range addrs {
		addrs[i].Port = port // host:port entries set the TCP port only
	}
	binds, err := Bindings(addrs, nil)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	u := &UDPServer{newSession: newSession, started: time.Now().Unix()}
	for _, b := range binds {
		network := "udp4"
		if b.V6() {
			network = "udp6"
		}
		pc, err := net.ListenPacket(network, net.JoinHostPort(b.IP.String(), strconv.Itoa(port)))
		if err != nil {
			if b.Wildcard() && b.V6() {
				continue // no IPv6 here: the wildcard is IPv4 only
			}
			u.Close()
			return nil, fmt.Errorf("udp: listen on %s: %w", net.JoinHostPort(b.IP.String(), strconv.Itoa(port)), err)
		}
		u.socks = append(u.socks, pc.(*net.UDPConn))
	}
	return u, nil
}

// Addr is the first socket's address.
func (u *UDPServer) Addr() net.Addr { return u.socks[0].LocalAddr() }

// LocalAddrs are the sockets' bound addresses (the ports the kernel chose
// for a port of 0).
func (u *UDPServer) LocalAddrs() []net.Addr {
	out := make([]net.Addr, len(u.socks))
	for i, c := range u.socks {
		out[i] = c.LocalAddr()
	}
	return out
}

// ConnLines are the sockets as `stats conns` lists them: memcached shows a
// UDP socket as a connection in conn_read.
func (u *UDPServer) ConnLines(now int64) []ConnLine {
	fds := u.Descriptors()
	lines := make([]ConnLine, 0, len(fds))
	for i, fd := range fds {
		addr := "udp:unknown"
		if ua, ok := u.socks[i].LocalAddr().(*net.UDPAddr); ok {
			addr = "udp:" + ua.String()
			if ua.IP.To4() == nil {
				addr = "udp6:" + ua.String()
			}
		}
		lines = append(lines, ConnLine{FD: fd, Addr: addr, State: StateWaiting, UDP: true, IdleSecs: now - u.started})
	}
	return lines
}

// Descriptors are the sockets' file descriptors, as memcached's -vv names
// its listeners.
func (u *UDPServer) Descriptors() []int {
	var fds []int
	for _, c := range u.socks {
		if rc, err := c.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { fds = append(fds, int(fd)) })
		}
	}
	return fds
}

// Serve answers datagrams until Close.
func (u *UDPServer) Serve() {
	for _, c := range u.socks {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			u.serve(c)
		}()
	}
	u.wg.Wait()
}

func (u *UDPServer) serve(c *net.UDPConn) {
	sess := u.newSession()
	pkt := make([]byte, udpMaxRequest)
	var scratch []byte
	for {
		n, from, err := c.ReadFromUDPAddrPort(pkt)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. an ICMP error surfaced on the socket
		}
		var frames [][]byte
		frames, scratch, err = UDPFrames(sess, pkt[:n], scratch)
		if err != nil {
			slog.Error("udp: session panicked; request dropped", "from", from, "err", err)
			sess = u.newSession()
			continue
		}
		for _, f := range frames {
			if _, err := c.WriteToUDPAddrPort(f, from); err != nil {
				break
			}
		}
		if cap(scratch) > KeepBufMax {
			scratch = nil
		}
	}
}

// Close stops serving; Serve returns once every socket is closed.
func (u *UDPServer) Close() error {
	u.closeOnce.Do(func() {
		for _, c := range u.socks {
			c.Close()
		}
	})
	return nil
}
