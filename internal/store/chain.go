package store

import "slices"

// Chained items: memcached stores an item larger than slab_chunk_max as a
// chain of chunks, and so does this store, with every chunk from the
// largest class (whose chunk is slab_chunk_max), so that one class lock
// covers a whole chain. The head chunk is a record as any other (header,
// key), then the arena offset of the first link, then the value's first
// part; each link is a 48-byte header (its data length in vlen, the head's
// offset in prev, the next link's in next, recChunk set, the queue byte
// queueChunk) and the next part of the value. So a 1 MB value with
// memcached's default 512 KB chunks takes three, as memcached's does
// (which puts its small header in another class, and its last part in the
// smallest class that holds it: one difference in `stats slabs`).
//
// Readers go through copyValue, which walks the links; Get hands its
// callback the whole value copied out of the chain into a pooled buffer.

// A chain link's state bit and queue byte.
const (
	recChunk   = 1 << 7 // a link of a chain (never set on a head or free chunk)
	queueChunk = 0xfd
)

// chainSlot is the bytes after the key that hold the first link's offset.
const chainSlot = 8

// chained reports whether the record r, of class class, is a chain's head.
func (sl *slabs) chained(r rec) bool {
	c := sl.largest()
	return r.class() == c.id && recSize(r.klen(), r.vlen()) > c.size
}

// chainedSize reports whether an item of these lengths is a chain.
func (sl *slabs) chainedSize(klen, vlen int) bool { return recSize(klen, vlen) > sl.largest().size }

// headRoom is how much of the value a chain's head holds.
func (sl *slabs) headRoom(klen int) int {
	return sl.largest().size - recHeader - klen - chainSlot
}

// chainLinks is how many links follow the head for a value of vlen; -1
// when the head cannot even hold the key.
func (sl *slabs) chainLinks(klen, vlen int) int {
	head, per := sl.headRoom(klen), sl.largest().size-recHeader
	if head < 0 || per <= 0 {
		return -1
	}
	if vlen <= head {
		return 0
	}
	return (vlen - head + per - 1) / per
}

// valueOff is where the value starts in a record with this key length:
// after the first link's offset in a chain's head.
func (sl *slabs) valueOff(r rec) int {
	if sl.chained(r) {
		return recHeader + r.klen() + chainSlot
	}
	return recHeader + r.klen()
}

// firstLink is the arena offset of a chain head's first link.
func (sl *slabs) firstLink(r rec) uint64 { return le.Uint64(r[recHeader+r.klen():]) }

// allocChain takes the head and links for an item of klen, vlen from the
// largest class for shard sh (locked), evicting as allocIn does, and
// writes a provisional head header (class, lengths, now) and the links. It
// returns nilLoc when the chunks could not all be had (those taken go
// back).
func (s *Store) allocChain(sh *shard, klen, vlen int, now uint32) uint64 {
	sl := s.slabs
	k := sl.chainLinks(klen, vlen)
	if k < 0 {
		return nilLoc
	}
	c := sl.largest()
	c.mu.Lock()
	defer c.mu.Unlock()
	chunks := make([]uint64, 0, k+1)
	for len(chunks) < k+1 {
		pos := s.takeOrPull(c, sh, now)
		if pos == nilLoc {
			for _, p := range chunks {
				sl.pushFree(c, p)
			}
			return nilLoc
		}
		chunks = append(chunks, pos)
	}
	head := sl.rec(chunks[0])
	head.writeHeader(klen, vlen, c.id, 0, 0, 0, now)
	le.PutUint64(head[recHeader+klen:], nilLoc)
	next := nilLoc
	left := vlen - sl.headRoom(klen)
	for i := k; i >= 1; i-- { // last link first, so each knows the next
		n := min(left-(i-1)*(c.size-recHeader), c.size-recHeader)
		l := sl.rec(chunks[i])
		l.writeHeader(0, n, c.id, 0, 0, 0, now)
		l[offBits], l[offQueue] = recChunk, queueChunk
		l.setPrev(chunks[0])
		l.setNext(next)
		next = chunks[i]
	}
	le.PutUint64(head[recHeader+klen:], next)
	return chunks[0]
}

// freeLinks gives the links of the chain whose head is r back to c
// (locked).
func (sl *slabs) freeLinks(c *slabClass, r rec) {
	for pos := sl.firstLink(r); pos != nilLoc; {
		next := sl.rec(pos).next()
		sl.pushFree(c, pos)
		pos = next
	}
	le.PutUint64(r[recHeader+r.klen():], nilLoc)
}

// copyValue copies the value bytes [off, off+len(dst)) of the record at
// pos into dst, across its chain if it has one.
func (sl *slabs) copyValue(pos uint64, off int, dst []byte) {
	sl.walkValue(pos, off, len(dst), func(part []byte, at int) { copy(dst[at:], part) })
}

// writeValue copies src into the value of the record at pos from off on.
func (sl *slabs) writeValue(pos uint64, off int, src []byte) {
	sl.walkValue(pos, off, len(src), func(part []byte, at int) { copy(part, src[at:]) })
}

// walkValue calls fn with each stretch of the value bytes [off, off+n) of
// the record at pos as it lies in its chunks, and where it falls in that
// range.
func (sl *slabs) walkValue(pos uint64, off, n int, fn func(part []byte, at int)) {
	r := sl.rec(pos)
	voff := sl.valueOff(r)
	if !sl.chained(r) {
		fn(r[voff+off:voff+off+n], 0)
		return
	}
	head := sl.headRoom(r.klen())
	at := 0
	if off < head {
		k := min(n, head-off)
		fn(r[voff+off:voff+off+k], 0)
		at, off, n = k, head, n-k
	}
	start := head // value offset of the current link's data
	for link := sl.firstLink(r); n > 0 && link != nilLoc; {
		l := sl.rec(link)
		size := l.vlen()
		if off < start+size {
			from := off - start
			k := min(n, size-from)
			fn(l[recHeader+from:recHeader+from+k], at)
			at, off, n = at+k, off+k, n-k
		}
		start += size
		link = l.next()
	}
}

// appendValue appends the whole value of the record at pos to dst.
func (sl *slabs) appendValue(dst []byte, pos uint64) []byte {
	n := sl.rec(pos).vlen()
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	sl.copyValue(pos, 0, dst[at:])
	return dst
}
