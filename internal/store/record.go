package store

import "encoding/binary"

// A record is one item in a chunk of a slab class (slab.go). Chunks start at
// 8-byte aligned arena offsets, so the index stores offset/8. Layout
// (little endian):
//
//	0  u32 value length
//	4  u8  key length
//	5  u8  state bits (recDead, recFetched, recReferenced, recTemp, and
//	       the meta protocol's recStale, recTokenSent, recKeyBinary)
//	6  u8  slab class (1..63); its top bit is recFlash (flash.go)
//	7  u8  LRU queue (queueHot, ...; lru.go)
//	8  u32 client flags
//	12 u32 exptime, absolute unix seconds, 0 = never
//	16 u64 cas unique (always kept; reported as 0 under -C)
//	24 u32 time stored, unix seconds (flush_all compares it)
//	28 u32 time last accessed, unix seconds (stats items age)
//	32 u64 arena offset of the previous record in its LRU queue (nilLoc: none)
//	40 u64 arena offset of the next record in its LRU queue, or of the next
//	       free chunk while the chunk is free
//	48 key, then value
const (
	recHeader = 48

	offVlen   = 0
	offKlen   = 4
	offBits   = 5
	offClass  = 6
	offQueue  = 7
	offFlags  = 8
	offExp    = 12
	offCAS    = 16
	offStored = 24
	offAccess = 28
	offPrev   = 32
	offNext   = 40
)

// State bits of a record.
const (
	recDead       = 1 << 0 // not in the index: free, or reserved for a value still arriving
	recFetched    = 1 << 1 // read at least once (for *_unfetched counters)
	recReferenced = 1 << 2 // read since it was written or last given a second chance
	// The meta protocol's item states (memcached's ITEM_STALE,
	// ITEM_TOKEN_SENT, ITEM_KEY_BINARY): invalidated by md I or a stale ms,
	// a client already holds the recache token, the key arrived base64'd.
	recStale     = 1 << 3
	recTokenSent = 1 << 4
	recKeyBinary = 1 << 5
	// recTemp marks an item in memcached's TEMP LRU: stored with at most
	// temporary_ttl seconds to live, never evicted (templru.go).
	recTemp = 1 << 6
)

// The class byte holds the slab class (1..63) in its low six bits; the
// two above mark the record: recFlash (flash.go) and recCASChosen.
const (
	classMask = 0x3f
	// recCASChosen: the item's CAS is one a client gave it (meta E). The
	// store's own CAS uniques grow with every store, so a flush_all can
	// tell by them what was stored before it (shard.flushed); a client's
	// says nothing of when the item was stored.
	recCASChosen = 1 << 6
)

func (r rec) casChosen() bool { return r[offClass]&recCASChosen != 0 }

// markCASChosen records whether r's CAS is the client's (recCASChosen).
func (r rec) markCASChosen(chosen bool) {
	if chosen {
		r[offClass] |= recCASChosen
	} else {
		r[offClass] &^= recCASChosen
	}
}

var le = binary.LittleEndian

// recSize is the bytes of chunk an item with the given key and value
// lengths needs (8-byte aligned, as chunks are).
func recSize(klen, vlen int) int { return (recHeader + klen + vlen + 7) &^ 7 }

// rec is a view of the record at one arena offset.
type rec []byte

func (r rec) vlen() int        { return int(le.Uint32(r[offVlen:])) }
func (r rec) klen() int        { return int(r[offKlen]) }
func (r rec) size() int        { return recSize(r.klen(), r.vlen()) }
func (r rec) bits() uint8      { return r[offBits] }
func (r rec) class() int       { return int(r[offClass] & classMask) }
func (r rec) queue() int       { return int(r[offQueue]) }
func (r rec) flags() uint32    { return le.Uint32(r[offFlags:]) }
func (r rec) exptime() uint32  { return le.Uint32(r[offExp:]) }
func (r rec) cas() uint64      { return le.Uint64(r[offCAS:]) }
func (r rec) stored() uint32   { return le.Uint32(r[offStored:]) }
func (r rec) accessed() uint32 { return le.Uint32(r[offAccess:]) }
func (r rec) key() []byte      { return r[recHeader : recHeader+r.klen()] }
func (r rec) value() []byte {
	k := recHeader + r.klen()
	return r[k : k+r.vlen()]
}

func (r rec) setBits(b uint8)      { r[offBits] |= b }
func (r rec) clearBits(b uint8)    { r[offBits] &^= b }
func (r rec) setExptime(e uint32)  { le.PutUint32(r[offExp:], e) }
func (r rec) setCAS(c uint64)      { le.PutUint64(r[offCAS:], c) }
func (r rec) setAccessed(t uint32) { le.PutUint32(r[offAccess:], t) }
func (r rec) prev() uint64         { return le.Uint64(r[offPrev:]) }
func (r rec) next() uint64         { return le.Uint64(r[offNext:]) }
func (r rec) setPrev(p uint64)     { le.PutUint64(r[offPrev:], p) }
func (r rec) setNext(n uint64)     { le.PutUint64(r[offNext:], n) }

// writeHeader fills the header of a fresh record, leaving its queue links
// to the class; the caller copies key and value.
func (r rec) writeHeader(klen, vlen, class int, flags, exptime uint32, cas uint64, now uint32) {
	le.PutUint32(r[offVlen:], uint32(vlen))
	r[offKlen] = uint8(klen)
	r[offBits] = 0
	r[offClass] = uint8(class)
	le.PutUint32(r[offFlags:], flags)
	le.PutUint32(r[offExp:], exptime)
	le.PutUint64(r[offCAS:], cas)
	le.PutUint32(r[offStored:], now)
	le.PutUint32(r[offAccess:], now)
}

// memcachedHeader is sizeof(item) in memcached 1.6 on 64-bit systems.
const memcachedHeader = 48

// mcSize is the item's size as memcached accounts it (ITEM_ntotal: its
// header, the key and a NUL, the client flags when nonzero, the value with
// its "\r\n", and the CAS unless -C): what `stats items` reports as
// mem_requested and meta debug as size, so that tools comparing them with
// chunk sizes see memcached's numbers.
func mcSize(klen, vlen int, flags uint32, noCAS bool) int {
	n := memcachedHeader + klen + 1 + vlen + 2
	if flags != 0 {
		n += 4
	}
	if !noCAS {
		n += 8
	}
	return n
}

func (r rec) mcSize(noCAS bool) int { return mcSize(r.klen(), r.vlen(), r.flags(), noCAS) }

// expired reports whether the record's exptime has passed at now.
func (r rec) expired(now uint32) bool {
	e := r.exptime()
	return e != 0 && e <= now
}
