package store

import "sync/atomic"

// A flash read's room. memcached allocates the item a flash value is read
// into from the item's own slab class (a chunk, or a chain for a large
// value) before it submits the read, evicting from that class as any
// store would; when that fails the read is not made and the get answers
// out of memory (get_oom_extstore). gocached's reads land in the engine's
// buffers, but each takes the same room from the slabs while it is in
// flight, so flash reads count against -m as memcached's do and fail
// where memcached's would: in a class left without pages (slabs
// reassign) and with nothing to evict.
//
// The room is written as a dead record in no queue and no index, as a
// value being received is (reserve.go): no lookup, walker or eviction
// sees it, and the slab mover waits for it. It goes back when the reply
// is made (Finish), or when a read whose reply was dropped completes.

// flashRoom is the chunk (or chain head) a read holds; zero holds none.
type flashRoom struct {
	sh  *shard
	pos int
}

// Read states, for a read its caller may abandon while it is in flight.
const (
	readIdle      uint32 = iota // not started, or finished
	readInFlight                // submitted, its completion not run
	readCompleted               // its completion ran; Finish not called yet
	readAbandoned               // dropped by its caller (Abort) before completing
)

// takeRoom allocates the room f's value needs, or counts get_oom_extstore
// and reports false.
func (f *FlashRead) takeRoom() bool {
	s := f.s
	sh, _ := s.shardFor(f.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	class := s.ItemClass(len(f.key), f.vlen, f.meta.Flags)
	pos, res := s.alloc(sh, len(f.key), f.vlen, class, now)
	if res != Stored {
		s.flash.getOOM.Add(1)
		return false
	}
	r := sh.rec(pos)
	r.writeHeader(len(f.key), f.vlen, class, 0, 0, 0, now)
	r.setBits(recDead)
	copy(r[recHeader:], f.key)
	f.room = flashRoom{sh: sh, pos: pos}
	return true
}

// releaseRoom gives f's room back, if it holds one.
func (f *FlashRead) releaseRoom() {
	sh := f.room.sh
	if sh == nil {
		return
	}
	sh.mu.Lock()
	sh.freeChunkLocked(f.room.pos)
	sh.mu.Unlock()
	f.room = flashRoom{}
}

// Refused takes back the hit the lookup counted for a read that found no
// room (Start or Drop false), as memcached 1.6.45 counts such a key: a
// text get or gat counts nothing for it, its counters coming only after
// the read is set up (asMiss false); a meta or binary get counts a miss
// (asMiss true). touch: the lookup counted a touch (gat, mg with T).
func (f *FlashRead) Refused(touch, asMiss bool) {
	sh, _ := f.s.shardFor(f.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := &sh.cls[f.hitClass]
	if touch {
		takeBack(&sh.st.TouchHits)
		takeBack(&c.touchHits)
		if asMiss {
			sh.st.TouchMisses++
		} else {
			takeBack(&sh.st.CmdTouch)
		}
		return
	}
	takeBack(&sh.st.GetHits)
	takeBack(&c.getHits)
	switch int(f.hitQueue) {
	case queueHot:
		takeBack(&c.hitsHot)
	case queueWarm:
		takeBack(&c.hitsWarm)
	case queueCold:
		takeBack(&c.hitsCold)
	case queueTemp:
		takeBack(&c.hitsTemp)
	}
	if asMiss {
		sh.st.GetMisses++
	} else {
		takeBack(&sh.st.CmdGet)
	}
}

// takeBack undoes one count, unless `stats reset` zeroed it meanwhile.
func takeBack(n *uint64) {
	if *n > 0 {
		*n--
	}
}

// settle moves f to its next state from the one the caller knows it is
// leaving: it reports whether f's room is now nobody's, the read both
// completed and abandoned, to be released by whichever came second.
func settle(state *atomic.Uint32, to uint32) (orphaned bool) {
	was := state.Swap(to)
	return was == readCompleted && to == readAbandoned || was == readAbandoned && to == readCompleted
}
