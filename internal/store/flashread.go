package store

import (
	"errors"
	"sync/atomic"

	"github.com/gocached/gocached/internal/extstore"
)

// FlashRead is a retrieval's read of a value that lies on flash: GetFlash
// or GetAndTouchFlash fills it in place of calling the value callback, the
// caller starts it, and once its done callback has run, Finish gives the
// value or a miss. A FlashRead may be reused once finished; its buffers
// are kept.
type FlashRead struct {
	s    *Store
	key  []byte
	meta Meta
	vlen int
	req  extstore.ReadRequest
	done func(*FlashRead)
	room flashRoom // the slab memory the read holds (flashroom.go)
	// hitClass and hitQueue: where the lookup counted its hit (Refused)
	hitClass, hitQueue uint8
	hitActive          bool          // the lookup left the item active (recache)
	state              atomic.Uint32 // readIdle, readInFlight, ...
}

// flashHit is what a lookup takes from a flash header under its lock.
type flashHit struct {
	loc  extstore.Location
	meta Meta
	vlen int
	// class and queue of the header as the lookup counted its hit
	// (FlashRead.Refused takes the hit back).
	class, queue uint8
	// active: the lookup left the item active (markRead), which the
	// recache of its value looks for once the read completes.
	active bool
}

func (s *Store) flashHitOf(r rec) flashHit {
	return flashHit{loc: r.flashLoc(), meta: s.meta(r), vlen: r.vlen(),
		class: uint8(r.class()), queue: uint8(r.queue())}
}

// Key is the item's key.
func (f *FlashRead) Key() []byte { return f.key }

// Meta is the item's flags, CAS and exptime as the lookup saw them.
func (f *FlashRead) Meta() Meta { return f.meta }

// ValueLen is the value's length.
func (f *FlashRead) ValueLen() int { return f.vlen }

// fill sets f to read key's flash value fh.
func (f *FlashRead) fill(s *Store, key []byte, fh flashHit) {
	f.s = s
	f.key = append(f.key[:0], key...)
	f.meta, f.vlen, f.req.Loc = fh.meta, fh.vlen, fh.loc
	f.hitClass, f.hitQueue = fh.class, fh.queue
	f.hitActive = fh.active
}

// readFlashNow reads key's flash value fh, waits, and calls fn with it on
// a hit (Get and GetAndTouch, touch for the latter); it reports the hit.
// A read refused for want of memory is a miss to these callers, counted
// as one (Refused's rule for meta and binary gets, whose replies are a
// miss too).
func (s *Store) readFlashNow(key []byte, fh flashHit, touch bool, fn func(value []byte, m Meta)) bool {
	fr := &FlashRead{}
	fr.fill(s, key, fh)
	done := make(chan struct{})
	if !fr.Start(func(*FlashRead) { close(done) }) {
		fr.Refused(touch, true)
		return false
	}
	<-done
	v, ok := fr.Finish()
	if ok {
		fn(v, fr.meta)
	}
	return ok
}

// Start takes the read's room from the slabs and submits the read. done
// runs once, before Start returns when no disk read is needed, else on
// another goroutine: it should only hand the FlashRead back to the
// caller's own loop, which then calls Finish. When the room cannot be had
// Start counts get_oom_extstore and returns false without reading: the
// caller answers memcached's out of memory reply, and done never runs.
func (f *FlashRead) Start(done func(*FlashRead)) bool {
	if !f.takeRoom() {
		return false
	}
	f.done = done
	if f.req.Done == nil {
		f.req.Done = f.complete
	}
	f.state.Store(readInFlight)
	f.s.flash.getExtstore.Add(1)
	f.s.flash.cfg.Engine.Submit(&f.req)
	return true
}

func (f *FlashRead) complete(*extstore.ReadRequest) {
	if settle(&f.state, readCompleted) {
		f.releaseRoom() // abandoned: nobody calls Finish
	}
	f.done(f)
}

// errMismatch is a record that is not the item's (a bug elsewhere, or
// damage the checksum missed): a miss like a bad checksum. Its key and
// length tell; not its CAS, which a meta delete's invalidation (I) or an
// explicit CAS may have changed in the header since the write, as in
// memcached, whose read takes the CAS from the header.
var errMismatch = errors.New("store: flash record does not match its item")

// Finish returns the value read (valid until the FlashRead is reused) and
// true, or false on a miss: the header is unlinked and the miss counted
// (miss_from_extstore, and badcrc_from_extstore for a bad record), as
// memcached does. Call it after done, from the caller's goroutine.
func (f *FlashRead) Finish() ([]byte, bool) {
	f.state.Store(readIdle)
	f.releaseRoom()
	rec, err := f.req.Record, f.req.Err
	if err == nil && (string(rec.Key) != string(f.key) || len(rec.Value) != f.vlen) {
		err = errMismatch
	}
	if err == nil {
		f.s.recache(f.key, f.req.Loc, rec, f.hitActive)
		return rec.Value, true
	}
	fs := f.s.flash
	fs.missFromExtstore.Add(1)
	if errors.Is(err, extstore.ErrChecksum) || errors.Is(err, extstore.ErrShort) || err == errMismatch {
		fs.badcrcFromExtstore.Add(1)
	}
	f.s.dropFlash(f.key, f.req.Loc)
	return nil, false
}

// Abort counts a started read whose reply was dropped before it was
// answered (get_aborted_extstore). The caller abandons f, never calling
// Finish: its room goes back once the read has completed.
func (f *FlashRead) Abort() {
	f.s.flash.getAborted.Add(1)
	if settle(&f.state, readAbandoned) {
		f.releaseRoom()
	}
}

// Drop is a read its caller abandons without starting it: memcached
// starts the reads of a get's keys before it meets a bad one, whose error
// then drops them (get_extstore and get_aborted_extstore). It takes and
// gives back the read's room as memcached allocates and frees the read's
// item; false: there was none (get_oom_extstore counted), and memcached
// answers out of memory rather than the bad key.
func (f *FlashRead) Drop() bool {
	if !f.takeRoom() {
		return false
	}
	f.releaseRoom()
	f.s.flash.getExtstore.Add(1)
	f.s.flash.getAborted.Add(1)
	return true
}

// dropFlash unlinks key's item if it is still the flash header of loc.
func (s *Store) dropFlash(key []byte, loc extstore.Location) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if slot := sh.find(key, tag); slot >= 0 {
		if r := sh.rec(sh.posOf(slot)); r.flash() && r.flashLoc() == loc {
			sh.unlink(slot)
		}
	}
}

// recache puts a flash item read back into RAM, as memcached's
// ext_recache_rate: one in RecacheRate reads of an item that is active
// (read again since it was fetched) and read within the last minute
// replaces its header with the whole item, CAS and times kept. A busy
// shard is passed over rather than waited for. hitActive: the read's
// lookup left the item active; a bump out of COLD (bumpFromCold) has
// cleared that since, where memcached's maintainer clears it later, most
// often after the read completes.
func (s *Store) recache(key []byte, loc extstore.Location, rd extstore.Record, hitActive bool) {
	f := s.flash
	rate := f.knobs.load().RecacheRate
	if rate == 0 {
		return
	}
	sh, tag := s.flashShard(key)
	if !sh.mu.TryLock() {
		return
	}
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	r, ok := s.stillAt(sh, tag, key, loc, now)
	const active = recFetched | recReferenced
	if !ok || r.bits()&recFetched == 0 || r.bits()&active != active && !hitActive || r.accessed()+itemUpdateInterval <= now {
		return
	}
	if (f.recacheCounter.Add(1)-1)%uint64(rate) != 0 {
		return
	}
	flags, exp, cas, stored, accessed, bits, chosen := r.flags(), r.exptime(), r.cas(), r.stored(), r.accessed(), r.bits(), r.casChosen()
	class := s.ItemClass(len(key), len(rd.Value), flags)
	pos, res := s.alloc(sh, len(key), len(rd.Value), class, now)
	if res != Stored {
		return
	}
	slot := sh.find(key, tag)
	if _, ok := s.stillAt(sh, tag, key, loc, now); !ok || slot < 0 {
		sh.freeChunkLocked(pos) // evicted for the room it took
		return
	}
	nr := sh.rec(pos)
	nr.writeHeader(len(key), len(rd.Value), class, flags, exp, cas, now)
	nr.markCASChosen(chosen)
	le.PutUint32(nr[offStored:], stored)
	nr.setAccessed(accessed)
	nr.setBits(bits &^ recTemp)
	copy(nr[recHeader:], key)
	s.slabs.writeValue(uint64(pos), 0, rd.Value)
	sh.link(slot, tag, pos)
	f.recacheFromExtstore.Add(1)
}
