package store

import (
	"bytes"
	"fmt"
	"testing"
)

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

// fill stores n values of 8 KiB, each in the class a 64 KiB value is not
// in, and n of 64 KiB, so both classes turn over.
func fillers(s *Store, tag string, n int) {
	for i := range n {
		s.Set(ModeSet, fmt.Appendf(nil, "%s-small%d", tag, i), 0, 0, bytes.Repeat([]byte{'f'}, 8<<10), 0)
		s.Set(ModeSet, fmt.Appendf(nil, "%s-big%d", tag, i), 0, 0, bytes.Repeat([]byte{'F'}, 64<<10), 0)
	}
}

// A pinned value reads as it was while its item is replaced, deleted or
// evicted and its class turned over many times, and its chunk goes back
// only on release: the next store in the class may then take it.
func TestValueRefPinsUntilReleased(t *testing.T) {
	for _, end := range []string{"replace", "delete", "evict"} {
		t.Run(end, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
			value := bytes.Repeat([]byte{'v'}, 64<<10)
			set(s, "big", string(value))
			ref, _ := refFor(t, s, "big")
			switch end {
			case "replace":
				set(s, "big", string(bytes.Repeat([]byte{'w'}, 64<<10)))
			case "delete":
				s.Delete([]byte("big"))
			}
			fillers(s, end, 200)
			if s.Stats().Evictions == 0 {
				t.Fatal("nothing was evicted")
			}
			if got, ok := copyAll(s, ref, 4096); !ok || !bytes.Equal(got, value) {
				t.Fatalf("pinned value: ok %v, same bytes %v", ok, bytes.Equal(got, value))
			}
			if _, _, ok := get(s, "big"); ok && end != "replace" {
				t.Fatal("the item outlived its delete or eviction") // (memcached evicts an item in use too)
			}
			checkInvariants(t, s)
			s.ReleaseRef(ref)
			if s.CopyValue(ref, 0, make([]byte, 1)) {
				t.Fatal("a released ref still copies")
			}
			fillers(s, end+"2", 200)
			checkInvariants(t, s)
		})
	}
}

// An orphaned chunk (its item gone while pinned) is neither free nor
// queued until released; then it is free again.
func TestReleasedOrphanChunkIsReused(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 256 << 10})
	set(s, "big", string(bytes.Repeat([]byte{'v'}, 64<<10)))
	ref, _ := refFor(t, s, "big")
	class := s.ItemClass(3, 64<<10, 0)
	c := &s.slabs.classes[class]
	freeNow := func() int { c.mu.Lock(); defer c.mu.Unlock(); return c.freeChunks() }
	before := freeNow()
	s.Delete([]byte("big"))
	if freeNow() != before {
		t.Fatal("a pinned chunk went back to its class at delete")
	}
	s.ReleaseRef(ref)
	if freeNow() != before+1 {
		t.Fatalf("free chunks %d after release, want %d", freeNow(), before+1)
	}
}

func TestCopyValueBounds(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 256 << 10})
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
	for _, r := range []ValueRef{ref, big, it} {
		s.ReleaseRef(r)
	}
	if s.CopyValue(big, 0, buf) {
		t.Fatal("a released ref still copies")
	}
	checkInvariants(t, s)
}
