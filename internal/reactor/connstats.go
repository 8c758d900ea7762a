package reactor

import (
	"net"
	"slices"
	"strconv"
)

// ConnState is a connection's state as memcached names it in `stats conns`.
type ConnState int32

// memcached shows a client that has sent nothing yet as conn_new_cmd and an
// idle one that has as conn_read (it parks connections there between
// requests); the zero value is the former.
const (
	StateNew       ConnState = iota // accepted, no request read yet: conn_new_cmd
	StateWaiting                    // waiting for the next request: conn_read
	StateParsing                    // handling requests: conn_parse_cmd
	StateWriting                    // sending replies the socket would not take: conn_mwrite
	StateListening                  // a listening socket: conn_listening
	StateReading                    // waiting for the rest of a request's data block: conn_nread
	StateWatching                   // a `watch` log stream: conn_watch
)

var stateNames = [...]string{
	StateNew:       "conn_new_cmd",
	StateWaiting:   "conn_read",
	StateParsing:   "conn_parse_cmd",
	StateWriting:   "conn_mwrite",
	StateListening: "conn_listening",
	StateReading:   "conn_nread",
	StateWatching:  "conn_watch",
}

// IdleState is the state of a connection whose Session has answered all it
// could and waits for input: conn_nread when the Session is partway through
// a request whose size it knows (a storage command's data block, a binary
// body), as memcached reads those in its own state, conn_watch for a
// `watch` stream, else conn_read (the rest of a line or of a binary
// header included). A Session that can tell (protocol.Session:
// ReadingData, Watching) says so; for any other, a Want is data. Every
// engine uses it, so all show a half-sent set alike.
func IdleState(s Session) ConnState {
	if s == nil {
		return StateWaiting
	}
	if w, ok := s.(interface{ Watching() bool }); ok && w.Watching() {
		return StateWatching
	}
	reading := s.Want() > 0
	if r, ok := s.(interface{ ReadingData() bool }); ok {
		reading = r.ReadingData()
	}
	if reading {
		return StateReading
	}
	return StateWaiting
}

func (s ConnState) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "conn_unknown"
	}
	return stateNames[s]
}

// ConnLine is one socket in `stats conns`.
type ConnLine struct {
	FD         int
	Addr       string // peer (clients) or bound address (listeners), as AddrString
	ListenAddr string // clients only: the local address the client reached
	State      ConnState
	IdleSecs   int64 // seconds since the last request (listeners: since they opened, as memcached)
	UDP        bool  // a UDP socket: memcached prints "N:UDP UDP", and no listen_addr while idle
}

// WriteConns renders `stats conns` as memcached does: every socket by
// descriptor number, ascending, listeners included, plus more's sockets
// (Config.MoreConns; may be nil).
func WriteConns(lines []ConnLine, more func(now int64) []ConnLine, now int64, add func(name, value string)) {
	if more != nil {
		lines = append(lines, more(now)...)
	}
	slices.SortFunc(lines, func(a, b ConnLine) int { return a.FD - b.FD })
	for _, l := range lines {
		p := strconv.Itoa(l.FD) + ":"
		if l.UDP {
			add(p+"UDP", "UDP")
		}
		add(p+"addr", l.Addr)
		if l.State != StateListening && !(l.UDP && l.State == StateWaiting) {
			add(p+"listen_addr", l.ListenAddr)
		}
		add(p+"state", l.State.String())
		add(p+"secs_since_last_cmd", strconv.FormatInt(max(l.IdleSecs, 0), 10))
	}
}

// AddrString formats an address the way memcached's `stats conns` does:
// "tcp:1.2.3.4:11211", "tcp6:[::1]:11211", "unix:/path" (see UnixAddrString).
func AddrString(a net.Addr) string {
	if ua, ok := a.(*net.UnixAddr); ok {
		return unixAddrString(ua)
	}
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta == nil {
		if a == nil {
			return "unknown"
		}
		return a.Network() + ":" + a.String()
	}
	if ta.IP.To4() == nil && len(ta.IP) == net.IPv6len {
		return "tcp6:" + ta.String()
	}
	return "tcp:" + ta.String()
}
