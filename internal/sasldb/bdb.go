package sasldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// Berkeley DB hash files, as libdb 5 writes them: the format of Cyrus
// SASL's sasldb2 on Debian (saslpasswd2 links libdb5.3). Page 0 is the
// hash metadata page; every other page starts with a 26-byte header, and
// a hash page's items follow the header's offset array in pairs, key then
// data. An item is one type byte and its bytes (H_KEYDATA), or a pointer
// to a chain of overflow pages (H_OFFPAGE). Only reading is needed, so the
// buckets are not followed: every hash page is read in file order.
// (libdb's db_page.h is the reference for the offsets below.)

const (
	hashMagic    = 0x061561
	pageHeader   = 26
	pHash        = 13 // P_HASH
	pHashUnsort  = 2  // P_HASH_UNSORTED, older writers
	pOverflow    = 7  // P_OVERFLOW
	hKeyData     = 1  // H_KEYDATA
	hDuplicate   = 2  // H_DUPLICATE
	hOffPage     = 3  // H_OFFPAGE
	hOffDup      = 4  // H_OFFDUP
	maxFileBytes = 64 << 20
)

var errNotHash = errors.New("not a Berkeley DB hash file")

// readHash returns every key/data pair of the Berkeley DB hash file at
// path. Duplicate-key items (sasldb has none) are refused.
func readHash(path string) (map[string][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseHash(data)
}

func parseHash(data []byte) (map[string][]byte, error) {
	if len(data) < 512 {
		return nil, errNotHash
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%d bytes: too large for a password database", len(data))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if bo.Uint32(data[12:]) != hashMagic {
		bo = binary.BigEndian
		if bo.Uint32(data[12:]) != hashMagic {
			return nil, errNotHash
		}
	}
	psize := int(bo.Uint32(data[20:]))
	if psize < 512 || psize > 65536 || psize&(psize-1) != 0 {
		return nil, fmt.Errorf("page size %d: %w", psize, errNotHash)
	}
	db := hashFile{data: data, psize: psize, bo: bo}
	out := make(map[string][]byte)
	pages := len(data) / psize
	for p := 1; p < pages; p++ {
		page := db.page(p)
		if t := page[25]; t != pHash && t != pHashUnsort {
			continue
		}
		n := int(bo.Uint16(page[20:]))
		if pageHeader+2*n > psize || n%2 != 0 {
			return nil, fmt.Errorf("page %d: %d entries: corrupt", p, n)
		}
		for i := 0; i < n; i += 2 {
			k, err := db.item(page, i, n)
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", p, err)
			}
			v, err := db.item(page, i+1, n)
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", p, err)
			}
			if k != nil && v != nil {
				out[string(k)] = v
			}
		}
	}
	return out, nil
}

type hashFile struct {
	data  []byte
	psize int
	bo    binary.ByteOrder
}

func (db hashFile) page(p int) []byte { return db.data[p*db.psize : (p+1)*db.psize] }

// item returns the bytes of the page's i-th item: items are packed from the
// page's end downwards, so an inline item ends where the one before it
// (or the page) begins. Sets of duplicates (H_DUPLICATE, H_OFFDUP), which
// sasldb never writes, give nil: the pair is skipped.
func (db hashFile) item(page []byte, i, n int) ([]byte, error) {
	off := int(db.bo.Uint16(page[pageHeader+2*i:]))
	end := db.psize
	if i > 0 {
		end = int(db.bo.Uint16(page[pageHeader+2*(i-1):]))
	}
	if off < pageHeader+2*n || off >= end || end > db.psize {
		return nil, fmt.Errorf("item %d at %d..%d: corrupt", i, off, end)
	}
	switch page[off] {
	case hKeyData:
		return page[off+1 : end], nil
	case hOffPage:
		if off+12 > end {
			return nil, fmt.Errorf("item %d: short overflow reference", i)
		}
		return db.overflow(db.bo.Uint32(page[off+4:]), db.bo.Uint32(page[off+8:]))
	case hDuplicate, hOffDup:
		return nil, nil
	default:
		return nil, fmt.Errorf("item %d: type %d not supported", i, page[off])
	}
}

// overflow gathers a value of total bytes from the overflow chain starting
// at page p; each page holds its share after the header, its length in
// the header's free-offset field. Lengths and page numbers are checked
// against the file before any arithmetic, so no value from the file can
// overflow an int, even a 32-bit one.
func (db hashFile) overflow(p, total uint32) ([]byte, error) {
	pages := uint32(len(db.data) / db.psize)
	if uint64(total) > uint64(len(db.data)) {
		return nil, fmt.Errorf("overflow value of %d bytes in a %d-byte file: corrupt", total, len(db.data))
	}
	out := make([]byte, 0, total)
	for seen := uint32(0); len(out) < int(total); seen++ {
		if p == 0 || p >= pages || seen >= pages {
			return nil, fmt.Errorf("overflow chain at page %d: corrupt", p)
		}
		page := db.page(int(p))
		if page[25] != pOverflow {
			return nil, fmt.Errorf("page %d: type %d, want overflow", p, page[25])
		}
		n := int(db.bo.Uint16(page[22:]))
		if pageHeader+n > db.psize || len(out)+n > int(total) {
			return nil, fmt.Errorf("overflow page %d: length %d: corrupt", p, n)
		}
		out = append(out, page[pageHeader:pageHeader+n]...)
		p = db.bo.Uint32(page[16:])
	}
	return out, nil
}
