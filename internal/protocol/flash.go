package protocol

import (
	"sync/atomic"

	"github.com/gocached/gocached/internal/store"
)

// Flash reads (memcached's extstore). A retrieval that meets an item whose
// value is on flash must not wait for the disk on the engine's thread: it
// starts the read and stops, as a multiget stops for the output budget.
// Every later reply of the batch waits behind it (the Process loop checks
// the read first), so replies keep their order; the replies before it go
// out meanwhile. The read's completion, on a back end goroutine, calls the
// engine's wakeup, and the engine's next Process call writes the value (or
// nothing: a failed read is a miss) and carries on.
//
// An engine that does not resume pending Sessions, or a datagram, gets the
// value read in place: the same read is started and waited for at once
// (submitFlash), so that the reply and the counters, a read refused for
// want of memory included, come out as for a resumed Session.

// flashWait is one read in flight for a Session. A Session keeps one and
// reuses it; a read abandoned by a reset keeps its own until it completes.
type flashWait struct {
	fr         store.FlashRead
	done       atomic.Bool
	submitting atomic.Bool // Start is running on the engine's thread: no wakeup needed
	wake       func()
	onDone     func(*store.FlashRead) // complete, bound once
	kind       flashKind
	withCAS    bool   // get: gets, gats
	observe    bool   // get: logs, watchers, prefix stats
	quiet      bool   // mg q, binary GetQ: a miss answers nothing
	head       []byte // mg: the reply's line, held until the value is read
	// binary: the request being answered
	binHeader        binHeader
	binKey, binValue bool
}

// flashKind is the reply a read completes.
type flashKind uint8

const (
	flashText   flashKind = iota // a VALUE block of get, gets, gat, gats
	flashMeta                    // mg's VA line and value
	flashBinary                  // a binary get's response
)

// holdBinaryFlash starts the read a binary get's lookup filled; false:
// there was no memory for it (store.FlashRead.Start), and memcached
// answers the get as a miss.
func (s *Session) holdBinaryFlash() bool {
	w := s.flash.w
	w.kind, w.quiet = flashBinary, s.bin.quiet
	w.binHeader, w.binKey, w.binValue = s.bin.header, s.bin.replyKey, s.bin.replyValue
	return s.submitFlash(w)
}

// finishBinaryFlash answers a binary get whose read is done: the value,
// or memcached's miss, made from the hit it would have sent (status
// KEY_ENOENT, no extras nor value, the key for GetK, the item's CAS kept).
func (s *Session) finishBinaryFlash(w *flashWait, v []byte, ok bool) {
	s.bin.header, s.bin.replyKey, s.bin.replyValue = w.binHeader, w.binKey, w.binValue
	s.bin.key = w.fr.Key()
	switch {
	case ok:
		s.binEmitValue(v, w.fr.Meta())
	case !w.quiet:
		keyLen := 0
		if w.binKey {
			keyLen = len(s.bin.key)
		}
		s.out = appendBinHeader(s.out, w.binHeader.opcode, statusKeyNotFound, 0, uint16(keyLen), uint32(keyLen), w.binHeader.opaque, w.fr.Meta().CAS)
		s.out = append(s.out, s.bin.key[:keyLen]...)
	}
}

// flashState is the Session's flash read, if one is in flight or done
// and not yet answered (active).
type flashState struct {
	w      *flashWait
	active bool
}

func (w *flashWait) complete(*store.FlashRead) {
	// wake is read before done is set: from then on the Session may
	// answer this read and start its next one on w, setting wake anew
	// while this call still runs.
	wake := w.wake
	w.done.Store(true)
	if !w.submitting.Load() && wake != nil {
		wake()
	}
}

// asyncFlash reports whether this Session may leave a flash read in
// flight: its engine resumes pending Sessions through a wakeup.
func (s *Session) asyncFlash() bool {
	return s.env.ResumesPending && s.conn.wakeup != nil && s.conn.datagramID == 0
}

// flashRead is the read a lookup fills for a value on flash.
func (s *Session) flashRead() *store.FlashRead { return &s.flashWait().fr }

func (s *Session) flashWait() *flashWait {
	if s.flash.w == nil {
		w := &flashWait{}
		w.onDone = w.complete
		s.flash.w = w
	}
	return s.flash.w
}

// startFlash starts the read flashRead filled for a get; the retrieval
// stops after its key. false: no memory for the read.
func (s *Session) startFlash(withCAS, observe bool) bool {
	w := s.flash.w
	w.kind = flashText
	w.withCAS, w.observe = withCAS, observe
	return s.submitFlash(w)
}

// submitFlash starts w's read; the Process loop waits for it before any
// other reply. false: the store had no memory for the read, which is not
// made (get_oom_extstore); nothing waits. A Session that may not leave a
// read in flight (asyncFlash) waits here until it completes, and the
// Process loop answers it at once.
func (s *Session) submitFlash(w *flashWait) bool {
	w.done.Store(false)
	w.wake = s.conn.wakeup
	var completed chan struct{}
	if !s.asyncFlash() {
		completed = make(chan struct{})
		w.wake = func() { close(completed) }
	}
	w.submitting.Store(true)
	ok := w.fr.Start(w.onDone)
	w.submitting.Store(false)
	s.flash.active = ok
	// complete sets done before it looks at submitting: done is seen here,
	// or wake runs.
	if ok && completed != nil && !w.done.Load() {
		<-completed
	}
	return ok
}

// Waiting reports that a flash read the Session started is not answered
// yet: in flight, or done since Process returned (its wakeup then has
// been called, or is being). Reporting only reads in flight would let an
// engine that checks after the read completes miss it and block on the
// socket while the client waits for the reply.
func (s *Session) Waiting() bool { return s.flash.active }

// flashReady reports whether the Session's read is done and waits to be
// answered.
func (s *Session) flashReady() bool { return s.flash.active && s.flash.w.done.Load() }

// finishFlash answers a done read: its VALUE block, or nothing on a miss;
// for mg its line and value, or on a miss memcached's bare "EN".
func (s *Session) finishFlash() {
	w := s.flash.w
	s.flash.active = false
	v, ok := w.fr.Finish()
	if w.kind == flashBinary {
		s.finishBinaryFlash(w, v, ok)
		return
	}
	if w.kind == flashMeta {
		switch {
		case ok:
			b := append(s.replyRoom(s.out, len(w.head)+len(v)+len(crlf)), w.head...)
			b = append(b, v...)
			s.out = append(b, crlf...)
		case !w.quiet:
			s.out = append(s.out, "EN\r\n"...)
		}
		return
	}
	key := w.fr.Key()
	s.get.key, s.get.withCAS = key, w.withCAS
	if ok {
		s.get.emitFn(v, w.fr.Meta())
	}
	if w.observe {
		s.observeGet(key, ok, store.Absent)
	}
}

// resetFlash drops a read a closed connection still waits for: it counts
// as aborted, and it completes on a flashWait of its own.
func (s *Session) resetFlash() {
	if s.flash.active {
		s.flash.w.fr.Abort()
		s.flash.w = nil
	}
	s.flash.active = false
}
