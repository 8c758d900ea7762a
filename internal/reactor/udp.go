package reactor

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
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
	// udpBinaryMagic starts a binary-protocol request.
	udpBinaryMagic = 0x80
	// UDPReplyMax bounds the reply to one datagram, which is gathered whole
	// before it is framed (a datagram count goes in every header): a 64 KiB
	// request of "get big big ..." would otherwise make up to 91 MB (what
	// the 16-bit sequence numbers carry; memcached, which sends from its
	// items, has no bound at all) on every UDP descriptor at once. A larger
	// reply is replaced by memcached's out-of-memory line.
	UDPReplyMax = 8 << 20
)

// udpReplyTooLarge stands for a reply past UDPReplyMax.
const udpReplyTooLarge = "SERVER_ERROR out of memory writing get response\r\n"

// UDPFrames turns one request datagram into its reply datagrams, running
// the request through sess. Like memcached it ignores datagrams shorter
// than a header or that claim to be part of a multi-datagram request.
// Replies to several requests in one datagram go out as one message
// (memcached sends one message per request); udpMessages has how a lone
// multiget and an empty reply are cut as memcached cuts them. buf is
// scratch space for the reply; the returned datagrams are slices of the
// returned scratch.
func UDPFrames(sess Session, pkt, buf []byte) (frames [][]byte, scratch []byte, err error) {
	if len(pkt) < udpHeaderLen || binary.BigEndian.Uint16(pkt[4:6]) != 1 {
		return nil, buf, nil
	}
	id := binary.BigEndian.Uint16(pkt[0:2])
	payload := pkt[udpHeaderLen:]
	in := payload
	out := buf[:0]
	var st protocol.Status
	tooLarge := false
	for len(in) > 0 || sess.Pending() {
		before := len(out)
		var n int
		var reply []byte
		n, reply, st, err = RunSession(sess, in, out)
		if err != nil {
			return nil, out, err
		}
		out, in = reply, in[n:]
		// A reply in chunks (Pending) is gathered whole, up to
		// UDPReplyMax: a datagram reply cannot wait for the client.
		if len(out) > UDPReplyMax || len(out) == UDPReplyMax && (sess.Pending() || len(in) > 0) {
			tooLarge = true
			break
		}
		resume := st != protocol.Close && Resume(sess.Pending(), n, len(out)-before)
		if !resume && (st != protocol.Yield || n == 0) {
			break // NeedMore: the rest is an incomplete request; Close: nothing more
		}
	}
	sess.Reset() // each datagram stands alone
	var cuts []int
	if tooLarge {
		out = append(out[:0], udpReplyTooLarge...)
		cuts = []int{len(out)}
	} else {
		cuts = udpMessages(payload[:len(payload)-len(in)], st, out)
	}
	if len(cuts) == 0 {
		return nil, out, nil
	}
	// Lay the datagrams out back to back after the reply: header, chunk.
	body := out[:len(out):len(out)]
	need := 2*len(out) + udpHeaderLen*(len(cuts)+(len(out)+udpMaxPayload-1)/udpMaxPayload)
	scratch = out
	if cap(scratch) < need {
		scratch = make([]byte, len(out), need)
		copy(scratch, out)
		body = scratch[:len(out):len(out)]
	}
	for i, end := range cuts {
		msg := body[:end]
		if i > 0 {
			msg = body[cuts[i-1]:end]
		}
		count := (len(msg) + udpMaxPayload - 1) / udpMaxPayload
		for seq := 0; seq == 0 || seq < count; seq++ {
			chunk := msg[min(seq*udpMaxPayload, len(msg)):min((seq+1)*udpMaxPayload, len(msg))]
			start := len(scratch)
			scratch = binary.BigEndian.AppendUint16(scratch, id)
			scratch = binary.BigEndian.AppendUint16(scratch, uint16(seq))
			scratch = binary.BigEndian.AppendUint16(scratch, uint16(count))
			scratch = binary.BigEndian.AppendUint16(scratch, 0)
			scratch = append(scratch, chunk...)
			frames = append(frames, scratch[start:])
		}
	}
	return frames, scratch, nil
}

// udpMessages cuts reply, the replies to the requests in used (the bytes
// of the datagram the Session consumed; st its last status), into the
// messages memcached sends, as the end offset of each; a message of no
// bytes goes out as a lone header whose datagram count is 0.
//
// memcached builds a response object per request, and per key of a
// multiget, and sends each as its own message: a message whose object
// is empty is a bare header, except that empty objects right after a sent
// one go with it. So a lone get, gets, gat or gats of several keys is cut
// at every key (a miss is an empty object); a request that answers
// nothing but is no noreply (quit, every binary request: quiet ones build
// empty objects) gives a bare header when nothing else answered.
func udpMessages(used []byte, st protocol.Status, reply []byte) []int {
	if len(reply) == 0 {
		if len(used) > 0 && (used[0] == udpBinaryMagic || st == protocol.Close && lastLineIsQuit(used)) {
			return []int{0}
		}
		return nil
	}
	if eol := bytes.IndexByte(used, '\n'); eol == len(used)-1 { // one line: one request
		if cuts := multigetCuts(used[:eol], reply); cuts != nil {
			return cuts
		}
	}
	return []int{len(reply)}
}

// multigetCuts cuts the reply to one retrieval command line (without its
// '\n') after each key's VALUE block (nothing, for a miss), the last cut
// after END, keeping only the first of a run of empty messages as memcached
// does. It returns nil when the line is no multiget of several keys or the
// reply is not VALUE blocks in key order then END (an error line).
func multigetCuts(line, reply []byte) []int {
	tokens := protocol.CommandFields(line)
	if len(tokens) == 0 {
		return nil
	}
	var keys [][]byte
	switch string(tokens[0]) {
	case "get", "gets":
		keys = tokens[1:]
	case "gat", "gats":
		if len(tokens) > 2 {
			keys = tokens[2:]
		}
	}
	if len(keys) < 2 {
		return nil
	}
	cuts := make([]int, 0, len(keys))
	pos := 0
	for _, k := range keys {
		if n := valueBlockLen(reply[pos:], k); n > 0 {
			pos += n
		}
		cuts = append(cuts, pos)
	}
	if !bytes.Equal(reply[pos:], []byte("END\r\n")) {
		return nil
	}
	cuts[len(cuts)-1] = len(reply)
	// Only the first message may be empty: memcached sends every empty
	// object after a sent one along with it.
	kept := cuts[:1]
	for _, c := range cuts[1:] {
		if c > kept[len(kept)-1] {
			kept = append(kept, c)
		}
	}
	return kept
}

// valueBlockLen is the length of the "VALUE key flags bytes [cas]\r\n"
// line and data block of key at the start of b, or 0.
func valueBlockLen(b, key []byte) int {
	prefix := len("VALUE ") + len(key) + 1
	if len(b) < prefix || !bytes.HasPrefix(b, []byte("VALUE ")) || !bytes.Equal(b[6:6+len(key)], key) || b[prefix-1] != ' ' {
		return 0
	}
	eol := bytes.Index(b, []byte("\r\n"))
	if eol < 0 {
		return 0
	}
	fields := bytes.Split(b[prefix:eol], []byte(" "))
	if len(fields) < 2 {
		return 0
	}
	size, err := strconv.Atoi(string(fields[1]))
	if err != nil || size < 0 {
		return 0
	}
	end := eol + 2 + size + 2
	if end > len(b) || !bytes.Equal(b[end-2:end], []byte("\r\n")) {
		return 0
	}
	return end
}

// lastLineIsQuit reports whether the last line of used is memcached's
// quit command.
func lastLineIsQuit(used []byte) bool {
	if len(used) == 0 || used[len(used)-1] != '\n' {
		return false
	}
	line := used[:len(used)-1]
	line = line[bytes.LastIndexByte(line, '\n')+1:]
	tokens := protocol.CommandFields(line)
	return len(tokens) > 0 && string(tokens[0]) == "quit"
}

// UDPServer serves -U on every address of -l. As memcached gives each
// worker thread its own descriptor of every UDP socket (a dup, so they
// share one receive queue), each socket here has perSocket descriptors,
// each read by its own goroutine with its own Session: datagrams are
// served perSocket at a time, and `stats conns` and the connection counts
// see perSocket connections per socket, as memcached's do.
type UDPServer struct {
	started    int64          // unix seconds, for stats conns
	bound      []*net.UDPConn // one per bound address
	socks      []*net.UDPConn // every descriptor: each bound socket, then its dups
	state      []udpSockState // per descriptor, for stats conns
	newSession func() Session
	wg         sync.WaitGroup
	closeOnce  sync.Once
	// bytesRead and bytesWritten count datagrams whole, header included,
	// as memcached adds UDP traffic to bytes_read and bytes_written.
	bytesRead, bytesWritten atomic.Uint64
	// statsReset: `stats reset` has run since the sockets opened, so they
	// no longer count in total_connections.
	statsReset atomic.Bool
}

// Traffic is the bytes received (datagrams over the 8-byte header, as
// memcached counts them) and sent since the start or ResetTraffic.
func (u *UDPServer) Traffic() (read, written uint64) {
	return u.bytesRead.Load(), u.bytesWritten.Load()
}

// ResetStats clears Traffic and takes the sockets out of ConnCounts'
// total, for `stats reset`.
func (u *UDPServer) ResetStats() {
	u.bytesRead.Store(0)
	u.bytesWritten.Store(0)
	u.statsReset.Store(true)
}

// ConnCounts is what the UDP descriptors add to curr_connections,
// connection_structures (open) and total_connections (total): memcached
// counts each of its per-thread UDP connections, and in total_connections
// until the first `stats reset`.
func (u *UDPServer) ConnCounts() (open, total uint64) {
	open = uint64(len(u.socks))
	if !u.statsReset.Load() {
		total = open
	}
	return open, total
}

// udpSockState is what `stats conns` shows of a socket, as memcached shows
// its UDP connection: the client of the request it is handling, if any
// (memcached's request_addr, shown in conn_parse_cmd), and when it last
// took a request.
type udpSockState struct {
	peer    atomic.Pointer[netip.AddrPort] // set while a request is handled
	lastCmd atomic.Int64                   // unix seconds
}

// ListenUDP binds the UDP sockets, the addresses -l would bind for TCP at
// port, each served through perSocket descriptors (memcached: one per
// worker thread, -t) and marked with mark (-o sock_cookie_id; 0: not).
func ListenUDP(listen string, port, perSocket int, mark uint32, newSession func() Session) (*UDPServer, error) {
	addrs, err := ParseListen(listen, port)
	if err != nil {
		return nil, UDPListenError(fmt.Errorf("udp: %w", err))
	}
	for i := range addrs {
		addrs[i].Port = port // host:port entries set the TCP port only
	}
	binds, err := Bindings(addrs, nil)
	if err != nil {
		return nil, UDPListenError(fmt.Errorf("udp: %w", err))
	}
	u := &UDPServer{newSession: newSession, started: time.Now().Unix()}
	err = BindEach(binds, func(b Binding) (int, error) {
		network := "udp4"
		if b.V6() {
			network = "udp6"
		}
		where := net.JoinHostPort(b.IP.String(), strconv.Itoa(b.Port))
		lc := net.ListenConfig{Control: MarkControl(mark)}
		pc, err := lc.ListenPacket(context.Background(), network, where)
		if err != nil {
			return 0, fmt.Errorf("udp: listen on %s: %w", where, err)
		}
		c := pc.(*net.UDPConn)
		u.bound = append(u.bound, c)
		u.socks = append(u.socks, c)
		for range max(perSocket, 1) - 1 {
			d, err := dupUDP(c)
			if err != nil {
				return 0, fmt.Errorf("udp: a descriptor per thread for %s: %v", c.LocalAddr(), err)
			}
			u.socks = append(u.socks, d)
		}
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	})
	if err != nil {
		u.Close()
		return nil, UDPListenError(err)
	}
	u.state = make([]udpSockState, len(u.socks))
	for i := range u.state {
		u.state[i].lastCmd.Store(u.started)
	}
	return u, nil
}

// Addr is the first socket's address.
func (u *UDPServer) Addr() net.Addr { return u.bound[0].LocalAddr() }

// LocalAddrs are the sockets' bound addresses (the ports the kernel chose
// for a port of 0).
func (u *UDPServer) LocalAddrs() []net.Addr {
	out := make([]net.Addr, len(u.bound))
	for i, c := range u.bound {
		out[i] = c.LocalAddr()
	}
	return out
}

// ConnLines are the sockets as `stats conns` lists them: memcached shows a
// UDP socket as a connection in conn_read, with its bound address and the
// seconds since it last took a request; the one handling a request (the
// `stats conns` itself, over UDP) in conn_parse_cmd, with the client's
// address and its own as listen_addr.
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
		st := &u.state[i]
		line := ConnLine{FD: fd, Addr: addr, State: StateWaiting, UDP: true, IdleSecs: now - st.lastCmd.Load()}
		if peer := st.peer.Load(); peer != nil {
			line.ListenAddr, line.Addr, line.State = addr, udpPeerString(*peer), StateParsing
		}
		lines = append(lines, line)
	}
	return lines
}

// udpPeerString formats a client's address as memcached's stats conns does.
func udpPeerString(p netip.AddrPort) string {
	if p.Addr().Is4() {
		return "udp:" + p.String()
	}
	return "udp6:" + p.String()
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
	for i, c := range u.socks {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			u.serve(c, &u.state[i])
		}()
	}
	u.wg.Wait()
}

func (u *UDPServer) serve(c *net.UDPConn, st *udpSockState) {
	fd := socketFD(c)
	sess := datagramSession(u.newSession(), fd)
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
		if n > udpHeaderLen {
			u.bytesRead.Add(uint64(n))
		}
		if n > udpHeaderLen && pkt[4] == 0 && pkt[5] == 1 { // a request memcached reads
			st.lastCmd.Store(time.Now().Unix())
			st.peer.Store(&from)
		}
		var frames [][]byte
		frames, scratch, err = UDPFrames(sess, pkt[:n], scratch)
		st.peer.Store(nil)
		if err != nil {
			LogSessionPanic(slog.Default(), "udp: session panicked; request dropped", err, "from", from)
			sess = datagramSession(u.newSession(), fd)
			continue
		}
		for _, f := range frames {
			n, err := c.WriteToUDPAddrPort(f, from)
			u.bytesWritten.Add(uint64(n))
			if err != nil {
				break
			}
		}
		if cap(scratch) > KeepBufMax {
			protocol.RecycleReply(scratch) // framed copies were sent
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

// datagramSession tells sess, when it can be told (protocol.Session can),
// that it serves the datagrams of the socket fd: memcached reads each by
// its first byte whatever -B says, and its -vv lines name the socket.
func datagramSession(sess Session, fd int) Session {
	if d, ok := sess.(interface{ Datagram(id int) }); ok {
		d.Datagram(fd)
	}
	return sess
}

// socketFD is c's descriptor, or -1.
func socketFD(c *net.UDPConn) int {
	fd := -1
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(s uintptr) { fd = int(s) })
	}
	return fd
}
