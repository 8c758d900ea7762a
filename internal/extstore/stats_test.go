package extstore

import (
	"fmt"
	"strings"
	"testing"
)

func TestStatsFresh(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 2)
	e := openEngine(t, cfg)
	s := e.Stats()
	var b strings.Builder
	s.Each(func(name string, v uint64) { fmt.Fprintf(&b, "STAT %s %d\n", name, v) })
	// The order and names memcached 1.6.45 prints, for a fresh 8-page store.
	want := `STAT extstore_page_allocs 0
STAT extstore_page_evictions 0
STAT extstore_page_reclaims 0
STAT extstore_pages_free 8
STAT extstore_pages_used 0
STAT extstore_objects_evicted 0
STAT extstore_objects_read 0
STAT extstore_objects_written 0
STAT extstore_objects_used 0
STAT extstore_bytes_evicted 0
STAT extstore_bytes_written 0
STAT extstore_bytes_read 0
STAT extstore_bytes_used 0
STAT extstore_bytes_fragmented 0
STAT extstore_limit_maxbytes 2097152
STAT extstore_io_queue 0
`
	if b.String() != want {
		t.Fatalf("stats:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	EachPage(e.Pages(nil)[:1], func(i int, f string, v uint64) { fmt.Fprintf(&b, "STAT %d:%s %d\n", i, f, v) })
	if want := "STAT 0:version 0\nSTAT 0:bytes 0\nSTAT 0:bucket 0\nSTAT 0:free_bucket 0\n"; b.String() != want {
		t.Fatalf("page stats:\n%s", b.String())
	}
}

func TestStatsCount(t *testing.T) {
	cfg, files := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	var locs []Location
	for i := range 5 {
		locs = append(locs, mustWrite(t, e, BucketDefault, quarterPage(i)))
	}
	e.WaitWrites()
	q := uint64(tPage / 4)
	e.Read(locs[0])
	e.Read(locs[4]) // from the open buffer
	e.Delete(locs[1])
	(*files)[0].set(func(f *faultFile) { f.flip = true })
	e.Read(locs[2])
	(*files)[0].set(func(f *faultFile) { f.flip, f.short = false, 3 })
	e.Read(locs[3])
	e.Read(Location{Page: 2, Version: 77, Len: 5})
	s := e.Stats()
	want := Stats{
		PageAllocs: 2, PageCount: 4, PageSize: tPage, PagesFree: 2, PagesUsed: 2,
		ObjectsRead: 4, ObjectsWritten: 5, ObjectsUsed: 4,
		BytesWritten: 5 * q, BytesRead: 4 * q, BytesUsed: 4 * q, BytesFragmented: 2*tPage - 4*q,
		ReadStale: 1, ReadBadCRC: 1, ReadShort: 1,
	}
	if s != want {
		t.Fatalf("stats\n%+v\nwant\n%+v", s, want)
	}
	if s.MissFromExtstore() != 3 || s.BadCRCFromExtstore() != 2 {
		t.Fatalf("misses %d, bad crc %d", s.MissFromExtstore(), s.BadCRCFromExtstore())
	}
	// Evicting the first page moves its live records to the evicted counts.
	e.EvictPage(locs[0].Page, locs[0].Version)
	s = e.Stats()
	if s.PageEvictions != 1 || s.ObjectsEvicted != 3 || s.BytesEvicted != 3*q || s.PageReclaims != 1 ||
		s.ObjectsUsed != 1 || s.BytesUsed != q || s.PagesFree != 3 {
		t.Fatalf("after eviction %+v", s)
	}
}
