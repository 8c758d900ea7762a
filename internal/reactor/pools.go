package reactor

import "github.com/gocached/gocached/internal/protocol"

// LoopPools keeps one event loop's reusable read and reply buffers and
// Sessions. It belongs to one goroutine (a reactor) and takes no lock.
// Idle connections hold no buffers: they come back here when empty.
type LoopPools struct {
	NewSession func() Session
	// Worker is the loop's number, which each Session it hands out draws
	// its connection memory from (protocol.Session.SetWorker).
	Worker   int
	reads    [][]byte
	writes   [][]byte
	sessions []Session
}

// poolDepth bounds the buffers and Sessions of each kind a loop keeps.
const poolDepth = 64

// Read returns an empty read buffer of capacity ReadBufSize.
func (p *LoopPools) Read() []byte {
	if n := len(p.reads); n > 0 {
		b := p.reads[n-1]
		p.reads = p.reads[:n-1]
		return b
	}
	return make([]byte, 0, ReadBufSize)
}

// PutRead keeps standard-size read buffers; grown ones go to the GC, which
// is how a buffer enlarged for one big value shrinks back.
func (p *LoopPools) PutRead(b []byte) {
	if cap(b) == ReadBufSize && len(p.reads) < poolDepth {
		p.reads = append(p.reads, b[:0])
	}
}

// Write returns an empty reply buffer.
func (p *LoopPools) Write() []byte {
	if n := len(p.writes); n > 0 {
		b := p.writes[n-1]
		p.writes = p.writes[:n-1]
		return b
	}
	return make([]byte, 0, ReadBufSize)
}

// PutWrite keeps reply buffers up to KeepBufMax and gives a large reply's
// buffer back to the protocol's pool (protocol.RecycleReply); the caller
// guarantees no send still reads from b.
func (p *LoopPools) PutWrite(b []byte) {
	switch {
	case b == nil:
	case cap(b) <= KeepBufMax:
		if len(p.writes) < poolDepth {
			p.writes = append(p.writes, b[:0])
		}
	default:
		protocol.RecycleReply(b)
	}
}

// Replaced takes back the reply buffer old once a Session's Process call
// returned its replies in now: when the Session moved them into a larger
// array (protocol's pooled buffer for a large reply, or one grown past it),
// old holds nothing anyone reads and goes back to its pool. Dropping it
// instead cost a fresh 16 KiB buffer, and its clearing, per reply of
// more than 16 KiB, enough garbage with the small Go heap for a GC cycle
// every few hundred such replies. The caller guarantees no send reads
// from old (engines pass the buffer a turn appends to, never one in flight).
func (p *LoopPools) Replaced(old, now []byte) {
	if cap(old) == 0 || cap(now) > 0 && &old[:1][0] == &now[:1][0] {
		return
	}
	p.PutWrite(old)
}

// Session returns a Session ready for a new connection.
func (p *LoopPools) Session() Session {
	var s Session
	if n := len(p.sessions); n > 0 {
		s = p.sessions[n-1]
		p.sessions = p.sessions[:n-1]
	} else {
		s = p.NewSession()
	}
	if w, ok := s.(interface{ SetWorker(int) }); ok {
		w.SetWorker(p.Worker)
	}
	return s
}

// PutSession resets s and keeps it. Only a Session in a known state may
// come back (not one that panicked).
func (p *LoopPools) PutSession(s Session) {
	s.Reset()
	if len(p.sessions) < poolDepth {
		p.sessions = append(p.sessions, s)
	}
}

// Grow returns b with its contents in a new buffer of capacity size.
func Grow(b []byte, size int) []byte {
	nb := make([]byte, len(b), size)
	copy(nb, b)
	return nb
}
