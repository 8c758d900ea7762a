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
	s := oneRing(t)
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

func TestReservationLostWhenTailPasses(t *testing.T) {
	s := oneRing(t)
	set(s, "k", "old")
	value := bytes.Repeat([]byte{'r'}, 100<<10)
	rv := s.Reserve([]byte("k"), len(value))
	filler := bytes.Repeat([]byte{'F'}, 8<<10)
	i := 0
	for ; fill(s, &rv, value[:1000], 1000); i++ {
		s.Set(ModeSet, fmt.Appendf(nil, "f%d", i), 0, 0, filler, 0)
		if i > 1000 {
			t.Fatal("never lost")
		}
	}
	if i < 100 {
		t.Fatalf("lost after %d fillers", i)
	}
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("k")}); res != OutOfMemory {
		t.Fatalf("commit: %v", res)
	}
	// As memcached: a set that could not be stored drops the old value.
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("old value survived a failed set")
	}
	st := s.Stats()
	if st.ReservationsLost != 1 || st.OutOfMemory != 1 || st.CmdSet != uint64(i)+2 {
		t.Fatalf("lost %d oom %d cmd_set %d", st.ReservationsLost, st.OutOfMemory, st.CmdSet)
	}
	checkInvariants(t, s)
}

func TestReservationLostOnResizeAndFlush(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	rv := s.Reserve([]byte("a"), 1000)
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	if fill(s, &rv, make([]byte, 1000), 1000) {
		t.Fatal("filled a reservation in a replaced ring")
	}
	// flush_all leaves records in place, so a value arriving across it is
	// kept and stored after it, as memcached links it after the flush.
	rv = s.Reserve([]byte("b"), 1000)
	s.FlushAll(0)
	if !fill(s, &rv, make([]byte, 1000), 1000) {
		t.Fatal("fill refused after flush_all")
	}
	if res, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("b")}); res != Stored {
		t.Fatalf("commit after flush_all: %v", res)
	}
	if _, _, ok := get(s, "b"); !ok {
		t.Fatal("value committed after flush_all is not visible")
	}
	if st := s.Stats(); st.ReservationsLost != 1 {
		t.Fatalf("lost %d", st.ReservationsLost)
	}
}

func TestReservationCommitModes(t *testing.T) {
	s := oneRing(t)
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
