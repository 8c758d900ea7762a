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
// value read in place (the store's Get waits for it).

// flashWait is one read in flight for a Session. A Session keeps one and
// reuses it; a read abandoned by a reset keeps its own until it completes.
type flashWait struct {
	fr         store.FlashRead
	done       atomic.Bool
	submitting atomic.Bool // Start is running on the engine's thread: no wakeup needed
	wake       func()
	onDone     func(*store.FlashRead) // complete, bound once
	withCAS    bool
	observe    bool
}

// flashState is the Session's flash read, if one is in flight or done
// and not yet answered (active).
type flashState struct {
	w      *flashWait
	active bool
}

func (w *flashWait) complete(*store.FlashRead) {
	w.done.Store(true)
	if !w.submitting.Load() && w.wake != nil {
		w.wake()
	}
}

// asyncFlash reports whether this Session may leave a flash read in
// flight: its engine resumes pending Sessions through a wakeup.
func (s *Session) asyncFlash() bool {
	return s.env.ResumesPending && s.conn.wakeup != nil && s.conn.datagramID == 0
}

// flashRead is the read a lookup fills for a value on flash.
func (s *Session) flashRead() *store.FlashRead {
	if s.flash.w == nil {
		w := &flashWait{}
		w.onDone = w.complete
		s.flash.w = w
	}
	return &s.flash.w.fr
}

// startFlash starts the read flashRead filled; the retrieval stops after
// its key.
func (s *Session) startFlash(withCAS, observe bool) {
	w := s.flash.w
	w.done.Store(false)
	w.wake = s.conn.wakeup
	w.withCAS, w.observe = withCAS, observe
	s.flash.active = true
	w.submitting.Store(true)
	w.fr.Start(w.onDone)
	w.submitting.Store(false)
}

// flashReady reports whether the Session's read is done and waits to be
// answered.
func (s *Session) flashReady() bool { return s.flash.active && s.flash.w.done.Load() }

// finishFlash answers a done read: its VALUE block, or nothing on a miss.
func (s *Session) finishFlash() {
	w := s.flash.w
	s.flash.active = false
	v, ok := w.fr.Finish()
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
