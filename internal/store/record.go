package store

import "encoding/binary"

// A record is one item in a shard's ring. Records start at 8-byte aligned
// offsets, so the index can store offset/8 in 32 bits. Layout (little endian):
//
//	0  u32 value length
//	4  u8  key length
//	5  u8  state bits (recDead, recFetched, recReferenced, recTemp, and
//	       the meta protocol's recStale, recTokenSent, recKeyBinary)
//	6  u16 size class, for per-class statistics
//	8  u32 client flags
//	12 u32 exptime, absolute unix seconds, 0 = never
//	16 u64 cas unique (always kept; reported as 0 under -C)
//	24 u32 time stored, unix seconds (flush_all compares it)
//	28 u32 time last accessed, unix seconds (stats items age)
//	32 key, then value, then padding to 8 bytes
const (
	recHeader = 32

	offVlen   = 0
	offKlen   = 4
	offBits   = 5
	offClass  = 6
	offFlags  = 8
	offExp    = 12
	offCAS    = 16
	offStored = 24
	offAccess = 28
)

// State bits of a record.
const (
	recDead       = 1 << 0 // unlinked from the index; its bytes wait for the ring tail
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

var le = binary.LittleEndian

// recSize is the ring footprint of an item with the given key and value lengths.
func recSize(klen, vlen int) int { return (recHeader + klen + vlen + 7) &^ 7 }

// rec is a view of the record at one offset of a ring.
type rec []byte

func (r rec) vlen() int        { return int(le.Uint32(r[offVlen:])) }
func (r rec) klen() int        { return int(r[offKlen]) }
func (r rec) size() int        { return recSize(r.klen(), r.vlen()) }
func (r rec) bits() uint8      { return r[offBits] }
func (r rec) class() int       { return int(le.Uint16(r[offClass:])) }
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

// writeHeader fills the header of a fresh record; the caller copies key and value.
func (r rec) writeHeader(klen, vlen, class int, flags, exptime uint32, cas uint64, now uint32) {
	le.PutUint32(r[offVlen:], uint32(vlen))
	r[offKlen] = uint8(klen)
	r[offBits] = 0
	le.PutUint16(r[offClass:], uint16(class))
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
