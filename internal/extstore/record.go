package extstore

import (
	"encoding/binary"
	"hash/crc32"
)

// Record is what a location holds: the item's key, value, CAS and client
// flags. The key lets a compactor find the RAM item of a record; the CAS
// lets it tell a rewritten item from the one on flash.
type Record struct {
	Key   []byte
	Value []byte
	CAS   uint64
	Flags uint32
}

// On flash a record is a 24-byte header then key and value:
//
//	0  crc32c of bytes 4..end
//	4  magic (recordMagic), told apart from a buffer's zeroed tail
//	6  key length
//	8  value length
//	12 CAS
//	20 client flags
const (
	headerSize  = 24
	recordMagic = 0xE57C
	maxKeyLen   = 1<<16 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Size is the bytes the record takes on flash.
func (r *Record) Size() int { return headerSize + len(r.Key) + len(r.Value) }

// encode writes r into dst, which holds r.Size() bytes.
func (r *Record) encode(dst []byte) {
	binary.LittleEndian.PutUint16(dst[4:], recordMagic)
	binary.LittleEndian.PutUint16(dst[6:], uint16(len(r.Key)))
	binary.LittleEndian.PutUint32(dst[8:], uint32(len(r.Value)))
	binary.LittleEndian.PutUint64(dst[12:], r.CAS)
	binary.LittleEndian.PutUint32(dst[20:], r.Flags)
	n := copy(dst[headerSize:], r.Key)
	copy(dst[headerSize+n:], r.Value)
	binary.LittleEndian.PutUint32(dst, crc32.Checksum(dst[4:r.Size()], castagnoli))
}

// recordLen reads the length a header claims, 0 when b does not start
// with a record header (a buffer's zeroed tail, or garbage).
func recordLen(b []byte) int {
	if len(b) < headerSize || binary.LittleEndian.Uint16(b[4:]) != recordMagic {
		return 0
	}
	return headerSize + int(binary.LittleEndian.Uint16(b[6:])) + int(binary.LittleEndian.Uint32(b[8:]))
}

// decode checks b, exactly one record's bytes, and returns the record with
// Key and Value pointing into b. False when the header or checksum is off.
func decode(b []byte) (Record, bool) {
	if recordLen(b) != len(b) {
		return Record{}, false
	}
	if crc32.Checksum(b[4:], castagnoli) != binary.LittleEndian.Uint32(b) {
		return Record{}, false
	}
	klen := int(binary.LittleEndian.Uint16(b[6:]))
	return Record{
		Key:   b[headerSize : headerSize+klen],
		Value: b[headerSize+klen:],
		CAS:   binary.LittleEndian.Uint64(b[12:]),
		Flags: binary.LittleEndian.Uint32(b[20:]),
	}, true
}
