package store

import (
	"fmt"
	"testing"
	"time"
)

// moverFixture fills one class with n items of vlen bytes ("k0" first)
// and deletes the newest `free` of them, so that a move of the class's
// oldest page has room outside it. It returns the class and a key whose
// item (its head, for a chain) lies in that page.
func moverFixture(t *testing.T, s *Store, n, vlen, free int) (*slabClass, []byte) {
	t.Helper()
	for i := range n {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, makeValue(uint64(i), vlen), 0); r != Stored {
			t.Fatalf("k%d: %v", i, r)
		}
	}
	for i := n - free; i < n; i++ {
		s.Delete(fmt.Appendf(nil, "k%d", i))
	}
	c := &s.slabs.classes[s.ItemClass(3, vlen, 0)]
	c.mu.Lock()
	p := int(c.pageList[0])
	c.mu.Unlock()
	for i := range n - free {
		k := fmt.Appendf(nil, "k%d", i)
		sh, tag := s.shardFor(k)
		sh.mu.Lock()
		slot := sh.find(k, tag)
		in := slot >= 0 && sh.posOf(slot)/pageSize == p
		sh.mu.Unlock()
		if in {
			return c, k
		}
	}
	t.Fatal("no item in the oldest page")
	return nil, nil
}

// waitMoverStats waits until the mover's counters satisfy ok.
func waitMoverStats(t *testing.T, s *Store, ok func(MoverStats) bool) MoverStats {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		st := s.MoverStats()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("mover stats %+v", st)
		}
	}
}

// TestMoverWaitsForHeldItems holds an item of the page being moved as
// memcached-debug's `debugitem lock` and `ref` do: the move stays running,
// busy with the status memcached 1.6.45 gives (a pinned plain item is
// copied out first, its old chunk then floats until released; a pinned
// chain is deleted once the move has been stuck moverMaxLoops walks), and
// ends once the hold does.
func TestMoverWaitsForHeldItems(t *testing.T) {
	for _, c := range []struct {
		name    string
		vlen    int
		hold    func(s *Store, key []byte) (release func())
		status  string
		deletes uint64 // busy deletes
		kept    bool   // the item is there after the move
	}{
		{"locked", 9000, func(s *Store, k []byte) func() {
			s.DebugLock(k)
			return func() { s.DebugUnlock(k) }
		}, "locked", 0, true},
		{"pinned", 9000, func(s *Store, k []byte) func() {
			ref, ok := s.DebugRef(k)
			if !ok {
				panic("no item to pin")
			}
			return func() { s.ReleaseRef(ref) }
		}, "busy_floating", 0, true},
		{"pinned chain", 600 << 10, func(s *Store, k []byte) func() {
			ref, ok := s.DebugRef(k)
			if !ok {
				panic("no item to pin")
			}
			return func() { s.ReleaseRef(ref) }
		}, "busy_floating", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(n int) { moverMaxLoops = n }(moverMaxLoops)
			moverMaxLoops = 3
			s := newTestStore(t, Config{MemoryLimit: 32 << 20, MaxItemSize: 1 << 20})
			n := 300
			if c.vlen > pageSize/2 {
				n = 12
			}
			cls, key := moverFixture(t, s, n, c.vlen, n/3)
			_, want, _ := get(s, string(key))
			release := c.hold(s, key)
			before := s.MoverStats()
			if r := s.Reassign(cls.id, 0); r != ReassignOK {
				t.Fatalf("reassign: %v", r)
			}
			done := s.mover.done
			st := waitMoverStats(t, s, func(st MoverStats) bool {
				return st.BusyItems > before.BusyItems+5 && st.LastBusyStatus == c.status
			})
			if !st.Running || st.Moved != before.Moved {
				t.Fatalf("held: %+v", st)
			}
			if v, m, ok := get(s, string(key)); ok != c.kept || ok && (m.CAS != want.CAS || checkValue([]byte(v)) != nil) {
				t.Errorf("while held: found %v, CAS %d (want %d)", ok, m.CAS, want.CAS)
			}
			release()
			<-done
			st = s.MoverStats()
			if st.Running || st.Moved != before.Moved+1 || st.BusyDeletes != before.BusyDeletes+c.deletes ||
				c.kept && st.Rescues+st.ChunkRescues == before.Rescues+before.ChunkRescues {
				t.Errorf("after the hold: %+v, before %+v", st, before)
			}
			if v, m, ok := get(s, string(key)); ok != c.kept || ok && (m.CAS != want.CAS || checkValue([]byte(v)) != nil) {
				t.Errorf("after the move: found %v, CAS %d (want %d)", ok, m.CAS, want.CAS)
			}
			if st := s.Stats(); st.Evictions != 0 {
				t.Errorf("%d evictions with room to spare", st.Evictions)
			}
			checkInvariants(t, s)
			if err := s.accountChunks(nil); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMoverMakesRoomByEvicting moves a page of a class that fills all of
// memory: as memcached 1.6.45's, the move drops no item for want of room
// (busy_nomem counts the waits) but evicts at the class's tail, and every
// item gone is an eviction. The automover's moves do not evict until
// memory is full with the pool empty: here it is, so they do too.
func TestMoverMakesRoomByEvicting(t *testing.T) {
	for _, byHand := range []bool{true, false} {
		t.Run(fmt.Sprint("by hand ", byHand), func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20})
			v := makeValue(1, 15000)
			for i := 0; s.Stats().Evictions == 0; i++ {
				if r := s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, v, 0); r != Stored {
					t.Fatalf("k%d: %v", i, r)
				}
			}
			cls := s.ItemClass(3, len(v), 0)
			before, mv := s.Stats(), s.MoverStats()
			if r := s.reassign(cls, 0, byHand); r != ReassignOK {
				t.Fatalf("reassign: %v", r)
			}
			<-s.mover.done
			after, st := s.Stats(), s.MoverStats()
			evicted := after.Evictions - before.Evictions
			if st.Moved != mv.Moved+1 || st.BusyNomem == mv.BusyNomem || evicted == 0 ||
				before.CurrItems-after.CurrItems != evicted || after.SlabGlobalPagePool != 1 {
				t.Errorf("items %d -> %d, %d evicted, pool %d; mover %+v", before.CurrItems, after.CurrItems, evicted, after.SlabGlobalPagePool, st)
			}
			checkInvariants(t, s)
		})
	}
}

// TestMoverEndsAtClose: a move waiting for a pinned item ends when the
// store closes, the chunks it had emptied given back to their class.
func TestMoverEndsAtClose(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 32 << 20, MaxItemSize: 1 << 20})
	cls, key := moverFixture(t, s, 300, 9000, 100)
	ref, _ := s.DebugRef(key)
	if r := s.Reassign(cls.id, 0); r != ReassignOK {
		t.Fatalf("reassign: %v", r)
	}
	waitMoverStats(t, s, func(st MoverStats) bool { return st.LastBusyStatus == "busy_floating" })
	s.Close()
	if st := s.MoverStats(); st.Running || st.Moved != 0 {
		t.Errorf("after Close: %+v", st)
	}
	s.ReleaseRef(ref)
	checkInvariants(t, s)
	if err := s.accountChunks(nil); err != nil {
		t.Error(err)
	}
}

// TestMoverGrowsBeforeEvicting: an automover's move with no free chunk
// in its class and memory below the limit evicts nothing; stuck for
// moverMaxLoops walks, it takes a new page to rescue into, as memcached
// 1.6.45's does.
func TestMoverGrowsBeforeEvicting(t *testing.T) {
	defer func(n int) { moverMaxLoops = n }(moverMaxLoops)
	moverMaxLoops = 3
	s := newTestStore(t, Config{MemoryLimit: 32 << 20, MaxItemSize: 1 << 20})
	v := makeValue(7, 9000)
	cls := &s.slabs.classes[s.ItemClass(3, len(v), 0)]
	n := 3 * cls.perPage // whole pages: no chunk left to cut
	for i := range n {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, v, 0); r != Stored {
			t.Fatalf("k%d: %v", i, r)
		}
	}
	if r := s.reassign(cls.id, 0, false); r != ReassignOK {
		t.Fatalf("reassign: %v", r)
	}
	<-s.mover.done
	st := s.MoverStats()
	if st.Moved != 1 || st.BusyNomem == 0 || st.Rescues != uint64(cls.perPage) || s.Stats().Evictions != 0 || s.Stats().CurrItems != uint64(n) {
		t.Errorf("mover %+v, evictions %d, items %d of %d", st, s.Stats().Evictions, s.Stats().CurrItems, n)
	}
	checkInvariants(t, s)
}
