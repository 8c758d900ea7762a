package store

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The mover walks class c's oldest page while every chunk in it is busy
// (here: two values a reader pins). Both pins end between two of its
// walks, and a chained item then takes chunks of that page. The mover's
// next walks must rescue the chain's chunks, or evict at the class's tail
// to make room (as memcached 1.6.45's mover does when moved by hand; it
// no longer drops an item it has no room for), and every chunk must stay
// accounted for. (With page runs, the page was pooled and
// handed out under the mover, which then corrupted the run.)
func TestMoverPageReusedMeanwhile(t *testing.T) {
	for _, spare := range []bool{false, true} {
		t.Run(fmt.Sprint("spare chunk ", spare), func(t *testing.T) { moverPageTakenByRun(t, spare) })
	}
}

func moverPageTakenByRun(t *testing.T, spare bool) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20})
	mid := func(i int) []byte { return makeValue(uint64(i), 500<<10) } // 512 KiB chunks, 2 a page
	for i := range 16 {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "mid%d", i), 0, 0, mid(i), 0); r != Stored {
			t.Fatalf("mid%d: %v", i, r)
		}
	}
	c := &s.slabs.classes[s.ItemClass(5, 500<<10, 0)]
	c.mu.Lock()
	p := int(c.pageList[0])
	pages := len(c.pageList)
	c.mu.Unlock()
	// The two items of the oldest page.
	var keys [][]byte
	for i := range 16 {
		k := fmt.Appendf(nil, "mid%d", i)
		sh, tag := s.shardFor(k)
		sh.mu.Lock()
		if slot := sh.find(k, tag); slot >= 0 && sh.posOf(slot)/pageSize == p {
			keys = append(keys, k)
		}
		sh.mu.Unlock()
	}
	if len(keys) != 2 || pages < 2 {
		t.Fatalf("oldest page %d holds %q, class has %d pages", p, keys, pages)
	}
	var refs []ValueRef
	for _, k := range keys {
		s.Get(k, func(v []byte, _ Meta) { refs = append(refs, s.RefOf(k, v)) })
	}
	if r := s.Reassign(c.id, 0); r != ReassignOK {
		t.Fatalf("reassign: %v", r)
	}
	// Let the mover meet the page busy before the pins end.
	for deadline := time.Now().Add(30 * time.Second); s.MoverStats().BusyItems == 0 && s.MoverStats().Running; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the mover never walked the page")
		}
	}
	for _, k := range keys {
		s.Delete(k)
	}
	for _, ref := range refs {
		s.ReleaseRef(ref)
	}
	if spare { // a free chunk elsewhere in the class for the mover's rescue
		for i := 15; i >= 0; i-- {
			if k := fmt.Appendf(nil, "mid%d", i); !bytes.Equal(k, keys[0]) && !bytes.Equal(k, keys[1]) {
				s.Delete(k)
				break
			}
		}
	}
	big := makeValue(99, 600<<10) // a chain of two chunks
	if r := s.Set(ModeSet, []byte("big"), 0, 0, big, 0); r != Stored {
		t.Fatalf("big: %v", r)
	}
	<-s.mover.done
	s.mover.mu.Lock()
	defer s.mover.mu.Unlock()
	if v, _, ok := get(s, "big"); ok && checkValue([]byte(v)) != nil || !ok && s.Stats().Evictions == 0 {
		t.Errorf("big after the move: ok %v, %v", ok, checkValue([]byte(v)))
	}
	for i := range 16 {
		if v, _, ok := get(s, fmt.Sprint("mid", i)); ok {
			if err := checkValue([]byte(v)); err != nil {
				t.Errorf("mid%d: %v", i, err)
			}
		}
	}
	checkInvariants(t, s)
	if err := s.accountChunks(nil); err != nil {
		t.Error(err)
	}
	s.Delete([]byte("big"))
	if err := s.accountChunks(nil); err != nil {
		t.Errorf("after deleting big: %v", err)
	}
	t.Logf("mover %+v", s.MoverStats())
}

// Under -race: the mover reads the state bits (and then the key) of every
// chunk of the page it walks holding only the class lock, while a store
// writes the header and key of a chunk it was just handed holding only its
// shard's lock (Reserve, setLocked, create: takeChunk's class lock is
// released before the record is written).
func TestMoverReadsChunksBeingWritten(t *testing.T) {
	heapArena = true // (a mapped arena is outside the race detector's sight)
	defer func() { heapArena = false }()
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 1 << 20})
	v := make([]byte, 3000)
	for i := range 3000 {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, v, 0)
	}
	class := s.ItemClass(5, len(v), 0)
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				k := fmt.Appendf(nil, "r%d-%d", g, i%500)
				rv := s.Reserve(k, len(v))
				s.ReleaseReserved(&rv)
				s.Set(ModeSet, fmt.Appendf(nil, "k%d", (i*7+g)%3000), 0, 0, v, 0)
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(stop) {
			if s.Reassign(class, 0) == ReassignOK {
				<-s.mover.done
			}
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	t.Logf("mover %+v", s.MoverStats())
}

// memcached 1.6.45's slabs-cas.t: an item the mover rescues keeps its CAS
// (a client's gets before the move and cas after must still match).
func TestMoverRescueKeepsCAS(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20})
	v := bytes.Repeat([]byte{'x'}, 70000)
	for i := 1; i <= 60; i++ {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "bfoo%d", i), 0, 0, v, 0); r != Stored {
			t.Fatalf("set %d: %v", i, r)
		}
	}
	_, before, ok := get(s, "bfoo5")
	if !ok {
		t.Fatal("bfoo5 evicted while filling")
	}
	for i := 6; i <= 60; i++ {
		s.Delete(fmt.Appendf(nil, "bfoo%d", i))
	}
	cls := s.ItemClass(5, len(v), 0)
	moved := s.MoverStats().Moved
	if r := s.Reassign(cls, 5); r != ReassignOK {
		t.Fatalf("reassign %d 5: %v", cls, r)
	}
	<-s.mover.done
	st := s.MoverStats()
	if st.Moved != moved+1 || st.Rescues == 0 {
		t.Fatalf("mover: %+v; want one page moved with rescues", st)
	}
	val, after, ok := get(s, "bfoo5")
	if !ok || val != string(v) || after.CAS != before.CAS {
		t.Errorf("bfoo5 after the move: found %v, CAS %d; before it %d", ok, after.CAS, before.CAS)
	}
	checkInvariants(t, s)
}

// A page of items ready to move is moved before Reassign returns, as
// memcached's rebalancer, woken at once, has moved it before a client can
// ask again: slabs_reassign.t reassigns twice in a row and wants OK twice,
// and on a loaded machine a move left to a goroutine had not run yet.
func TestReassignMovesAReadyPageAtOnce(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 1 << 20})
	for i := range 64 {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, makeValue(uint64(i), 100<<10), 0); r != Stored {
			t.Fatalf("k%d: %v", i, r)
		}
	}
	id := s.ItemClass(3, 100<<10, 0)
	for round := range 2 {
		if r := s.Reassign(id, 0); r != ReassignOK {
			t.Fatalf("reassign %d: %v", round, r)
		}
		if st := s.MoverStats(); st.Running || st.Moved != uint64(round+1) {
			t.Fatalf("after reassign %d returned: running %v, moved %d (%+v)", round, st.Running, st.Moved, st)
		}
	}
	for i := range 64 {
		if v, _, ok := get(s, fmt.Sprint("k", i)); ok {
			if err := checkValue([]byte(v)); err != nil {
				t.Errorf("k%d: %v", i, err)
			}
		}
	}
	checkInvariants(t, s)
}
