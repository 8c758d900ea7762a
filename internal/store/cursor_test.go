package store

import (
	"bytes"
	"fmt"
	"testing"
)

// oneRing is a store with a single 1 MiB ring, so tests know which records
// share it.
func oneRing(t *testing.T) *Store {
	t.Helper()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 256 << 10})
	if len(s.shards) != 1 {
		t.Fatalf("%d shards, want 1", len(s.shards))
	}
	return s
}

// refFor reads key and returns its ValueRef and a copy of its value.
func refFor(t *testing.T, s *Store, key string) (ValueRef, []byte) {
	t.Helper()
	var ref ValueRef
	var val []byte
	if !s.Get([]byte(key), func(v []byte, m Meta) { ref, val = s.RefOf([]byte(key), v), bytes.Clone(v) }) {
		t.Fatalf("%s: miss", key)
	}
	if ref.Len() != len(val) {
		t.Fatalf("ref length %d, value %d", ref.Len(), len(val))
	}
	return ref, val
}

// copyAll copies the whole value named by ref in pieces of n bytes.
func copyAll(s *Store, ref ValueRef, n int) ([]byte, bool) {
	out := make([]byte, ref.Len())
	for off := 0; off < len(out); off += n {
		if !s.CopyValue(ref, off, out[off:min(off+n, len(out))]) {
			return nil, false
		}
	}
	return out, true
}

// fillUntilLost stores filler values (bytes unlike the value named by ref)
// until CopyValue refuses ref. Every copy that succeeds on the way must
// give exactly want. It returns how many fillers were stored first.
func fillUntilLost(t *testing.T, s *Store, ref ValueRef, want []byte) int {
	t.Helper()
	filler := bytes.Repeat([]byte{'F'}, 8<<10)
	for i := range 10000 {
		got, ok := copyAll(s, ref, 4096)
		if !ok {
			return i
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("after %d fillers CopyValue gave other bytes", i)
		}
		s.Set(ModeSet, fmt.Appendf(nil, "filler%d", i), 0, 0, filler, 0)
	}
	t.Fatal("the value was never overwritten")
	return 0
}

func TestValueRefSurvivesUntilOverwritten(t *testing.T) {
	s := oneRing(t)
	value := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16)
	set(s, "big", string(value))
	ref, got := refFor(t, s, "big")
	if !bytes.Equal(got, value) {
		t.Fatal("Get gave other bytes")
	}
	// Deleted and replaced, the old bytes are still the value as read.
	s.Delete([]byte("big"))
	set(s, "big", "small now")
	n := fillUntilLost(t, s, ref, value)
	// The ring holds 1 MiB: about that much of fillers passes before the
	// head comes back to the record (less the bytes stored before it).
	if n < 100 {
		t.Fatalf("lost after only %d fillers of 8 KiB", n)
	}
	if st := s.Stats(); st.RefsLost != 1 {
		t.Fatalf("RefsLost %d, want 1", st.RefsLost)
	}
	checkInvariants(t, s)
}

// A read item gets a second chance when the tail reaches it: it is copied
// to the head, in this ring nearly always over part of its old bytes. A ref
// taken before must then read the old value exactly or be refused.
func TestValueRefAcrossSecondChanceMove(t *testing.T) {
	s := oneRing(t)
	value := bytes.Repeat([]byte{'v'}, 64<<10)
	set(s, "pad", "p")
	set(s, "big", string(value))
	get(s, "big")
	ref, _ := refFor(t, s, "big") // the second read earns it a second chance
	sh := &s.shards[0]
	moved := func() bool {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		pos := sh.posOf(sh.find([]byte("big"), tagOfKey([]byte("big"))))
		return sh.bornOf(pos) != ref.born
	}
	for i := 0; !moved(); i++ {
		if got, ok := copyAll(s, ref, 4096); !ok || !bytes.Equal(got, value) {
			t.Fatalf("before the move, after %d fillers: ok %v", i, ok)
		}
		s.Set(ModeSet, fmt.Appendf(nil, "f%d", i), 0, 0, bytes.Repeat([]byte{'F'}, 8<<10), 0)
		if i > 1000 {
			t.Fatal("the item was never moved")
		}
	}
	if got, ok := copyAll(s, ref, 4096); ok && !bytes.Equal(got, value) {
		t.Fatal("after the move the old ref read other bytes")
	}
	// A fresh ref names the moved record and lives on.
	ref2, _ := refFor(t, s, "big")
	if got, ok := copyAll(s, ref2, 1<<20); !ok || !bytes.Equal(got, value) {
		t.Fatalf("moved record: ok %v", ok)
	}
	fillUntilLost(t, s, ref2, value)
	checkInvariants(t, s)
}

func TestValueRefAcrossMemoryLimitChange(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	value := bytes.Repeat([]byte{'m'}, 200<<10)
	set(s, "big", string(value))
	ref, _ := refFor(t, s, "big")
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	// The ring it named is gone (unmapped, with Mmap).
	if _, ok := copyAll(s, ref, 1<<20); ok {
		t.Fatal("ref survived the ring's replacement")
	}
	ref2, _ := refFor(t, s, "big")
	if got, ok := copyAll(s, ref2, 1<<20); !ok || !bytes.Equal(got, value) {
		t.Fatalf("after resize: ok %v", ok)
	}
}

func TestValueRefAcrossFlushAll(t *testing.T) {
	s := oneRing(t)
	value := bytes.Repeat([]byte{'q'}, 100<<10)
	set(s, "big", string(value))
	ref, _ := refFor(t, s, "big")
	s.FlushAll(0)
	if _, _, ok := get(s, "big"); ok {
		t.Fatal("flushed item still there")
	}
	// Nothing overwrote it yet: the reply in progress can finish.
	if got, ok := copyAll(s, ref, 1<<20); !ok || !bytes.Equal(got, value) {
		t.Fatalf("after flush_all: ok %v", ok)
	}
	// flush_all is lazy: the record stays until the ring turns over it.
	for i := 0; i < 12; i++ {
		set(s, fmt.Sprint("next", i), string(value))
	}
	if _, ok := copyAll(s, ref, 1<<20); ok {
		t.Fatal("ref survived the head writing over it")
	}
}

func TestCopyValueBounds(t *testing.T) {
	s := oneRing(t)
	set(s, "k", "hello")
	var ref ValueRef
	s.View([]byte("k"), func(i Item) { ref = i.Ref() })
	buf := make([]byte, 3)
	if !s.CopyValue(ref, 2, buf) || string(buf) != "llo" {
		t.Fatalf("got %q", buf)
	}
	if s.CopyValue(ref, 3, buf) || s.CopyValue(ref, -1, buf[:1]) {
		t.Fatal("out-of-range copy accepted")
	}
	// RefOf refuses what is not a value the callback was handed.
	s.Get([]byte("k"), func(v []byte, _ Meta) {
		if s.RefOf([]byte("k"), []byte("hello")) != (ValueRef{}) || s.RefOf([]byte("kk"), v) != (ValueRef{}) {
			t.Error("RefOf named a slice that is not the value")
		}
	})
	set(s, "big", string(make([]byte, 100<<10)))
	big, _ := refFor(t, s, "big")
	var it ValueRef
	s.View([]byte("big"), func(i Item) { it = i.Ref() })
	if it != big {
		t.Fatalf("Item.Ref %+v, Get's %+v", it, big)
	}
}
