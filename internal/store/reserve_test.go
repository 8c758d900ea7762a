package store

import (
	"bytes"
	"fmt"
	"testing"
)

// fill copies value into rv in pieces of n bytes and reports whether every
// piece went in.
func fill(s *Store, rv *Reservation, value []byte, n int) bool {
	return fillAt(s, rv, 0, value, n)
}

// fillAt is fill of the value's bytes from base on.
func fillAt(s *Store, rv *Reservation, base int, value []byte, n int) bool {
	for off := 0; off < len(value); off += n {
		if !s.FillReserved(rv, base+off, value[off:min(off+n, len(value))]) {
			return false
		}
	}
	return true
}

func TestReservationInvisibleUntilCommitted(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	value := bytes.Repeat([]byte("abc"), 30000)
	rv := s.Reserve([]byte("k"), len(value))
	if rv.Lost() || rv.Len() != len(value) {
		t.Fatalf("reservation lost %v len %d", rv.Lost(), rv.Len())
	}
	if !fill(s, &rv, value[:50000], 7000) {
		t.Fatal("fill refused")
	}
	// Half received: no lookup, dump or statistic sees it.
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("get sees a reservation")
	}
	dumped := 0
	var c DumpCursor
	for !s.Dump(&c, 1<<20, func(Item) bool { dumped++; return true }) {
	}
	if st := s.Stats(); dumped != 0 || st.CurrItems != 0 || st.Bytes != 0 || st.CmdSet != 0 {
		t.Fatalf("dumped %d, stats %+v", dumped, st)
	}
	checkInvariants(t, s)
	if !fillAt(s, &rv, 50000, value[50000:], 9999) {
		t.Fatal("fill refused")
	}
	res, cas := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("k"), Flags: 7, Exptime: 100})
	if res != Stored || cas == 0 || !rv.Lost() {
		t.Fatalf("commit: %v cas %d, used up %v", res, cas, rv.Lost())
	}
	got, m, ok := get(s, "k")
	if !ok || got != string(value) || m.Flags != 7 || m.CAS != cas || m.Exptime == 0 {
		t.Fatalf("after commit: ok %v flags %d cas %d/%d", ok, m.Flags, m.CAS, cas)
	}
	if st := s.Stats(); st.CurrItems != 1 || st.CmdSet != 1 || st.TotalItems != 1 {
		t.Fatalf("stats %+v", st)
	}
	// A reservation is used once.
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("k")}); res != OutOfMemory {
		t.Fatalf("second commit: %v", res)
	}
	checkInvariants(t, s)
}

// A reservation holds its chunk however its class turns over meanwhile,
// as memcached's item being read is pinned.
func TestReservationHeldWhileClassTurnsOver(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	set(s, "k", "old")
	value := bytes.Repeat([]byte{'r'}, 100<<10)
	rv := s.Reserve([]byte("k"), len(value))
	filler := bytes.Repeat([]byte{'F'}, 100<<10)
	for i := range 100 {
		if !fillAt(s, &rv, i*1000, value[i*1000:], 1000) {
			t.Fatalf("fill %d refused", i)
		}
		s.Set(ModeSet, fmt.Appendf(nil, "f%d", i), 0, 0, filler, 0)
	}
	if s.Stats().Evictions == 0 {
		t.Fatal("nothing was evicted")
	}
	if !fillAt(s, &rv, 100*1000, value[100*1000:], len(value)-100*1000) {
		t.Fatal("last fill refused")
	}
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("k")}); res != Stored {
		t.Fatalf("commit: %v", res)
	}
	if got, _, ok := get(s, "k"); !ok || got != string(value) {
		t.Fatal("committed value differs")
	}
	checkInvariants(t, s)
}

// A reservation released uncommitted gives its chunk back; one made
// across cache_memlimit and flush_all is stored after them, as memcached
// links an item read across them.
func TestReservationReleasedAndAcrossLimitAndFlush(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	rv := s.Reserve([]byte("a"), 1000)
	c := &s.slabs.classes[s.ItemClass(1, 1000, 0)]
	free := func() int { c.mu.Lock(); defer c.mu.Unlock(); return c.freeChunks() }
	before := free()
	s.ReleaseReserved(&rv)
	if free() != before+1 || !rv.Lost() || fill(s, &rv, make([]byte, 1000), 1000) {
		t.Fatalf("release: free chunks %d, want %d; lost %v", free(), before+1, rv.Lost())
	}
	rv = s.Reserve([]byte("b"), 1000)
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	s.FlushAll(0)
	if !fill(s, &rv, make([]byte, 1000), 1000) {
		t.Fatal("fill refused after cache_memlimit and flush_all")
	}
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("b")}); res != Stored {
		t.Fatalf("commit after flush_all: %v", res)
	}
	if _, _, ok := get(s, "b"); !ok {
		t.Fatal("value committed after flush_all is not visible")
	}
	checkInvariants(t, s)
}

func TestReservationCommitModes(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	value := bytes.Repeat([]byte{'n'}, 20000)
	commit := func(key string, req SetRequest) Result {
		t.Helper()
		rv := s.Reserve([]byte(key), len(value))
		if !fill(s, &rv, value, 4096) {
			t.Fatal("fill refused")
		}
		req.Key = []byte(key)
		res, _ := s.CommitReserved(&rv, req)
		return res
	}
	set(s, "have", "abc")
	if r := commit("have", SetRequest{Mode: ModeAdd}); r != NotStored {
		t.Fatalf("add on existing: %v", r)
	}
	if r := commit("none", SetRequest{Mode: ModeReplace}); r != NotStored {
		t.Fatalf("replace on missing: %v", r)
	}
	if r := commit("none", SetRequest{Mode: ModeCAS, CAS: 5}); r != NotFound {
		t.Fatalf("cas on missing: %v", r)
	}
	_, m, _ := get(s, "have")
	if r := commit("have", SetRequest{Mode: ModeCAS, CAS: m.CAS + 1}); r != Exists {
		t.Fatalf("cas mismatch: %v", r)
	}
	if r := commit("have", SetRequest{Mode: ModeAppend}); r != Stored {
		t.Fatalf("append: %v", r)
	}
	if v, _, _ := get(s, "have"); v != "abc"+string(value) {
		t.Fatal("append combined wrongly")
	}
	set(s, "p", "xyz")
	if r := commit("p", SetRequest{Mode: ModePrepend}); r != Stored {
		t.Fatalf("prepend: %v", r)
	}
	if v, _, _ := get(s, "p"); v != string(value)+"xyz" {
		t.Fatal("prepend combined wrongly")
	}
	if r := commit("gone", SetRequest{Mode: ModeSet, Exptime: -1}); r != Stored {
		t.Fatalf("expired set: %v", r)
	}
	if _, _, ok := get(s, "gone"); ok {
		t.Fatal("an already expired set is visible")
	}
	if st := s.Stats(); st.CurrItems != 2 {
		t.Fatalf("curr_items %d", st.CurrItems)
	}
	checkInvariants(t, s)
}

func TestReservationUnderNoEvictions(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 256 << 10, DisableEvictions: true})
	value := make([]byte, 200<<10)
	n := 0
	for ; set(s, fmt.Sprint(n), string(value)) == Stored; n++ {
	}
	rv := s.Reserve([]byte("more"), len(value))
	if !rv.Lost() {
		t.Fatal("reserved past -M's limit")
	}
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("more")}); res != OutOfMemory {
		t.Fatalf("commit: %v", res)
	}
	for i := range n {
		if _, _, ok := get(s, fmt.Sprint(i)); !ok {
			t.Fatalf("-M lost item %d", i)
		}
	}
	checkInvariants(t, s)
}

// A fill outside the value loses the reservation; its chunk must go back
// then, as a lost reservation is never released again.
func TestFillOutOfRangeGivesChunkBack(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	rv := s.Reserve([]byte("k"), 100<<10)
	if s.FillReserved(&rv, 100<<10-10, make([]byte, 20)) || !rv.Lost() {
		t.Fatal("an out-of-range fill was taken")
	}
	s.ReleaseReserved(&rv)
	if err := s.accountChunks(nil); err != nil {
		t.Fatal(err)
	}
}
