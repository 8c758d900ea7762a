package store

import (
	"fmt"
	"strings"
	"testing"
)

func TestSetMemoryLimitGrowKeepsEverything(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 64 << 10})
	for i := range 2000 {
		set(s, fmt.Sprintf("k%d", i), strings.Repeat("v", i%300))
	}
	s.Delete([]byte("k5"))
	before := s.Stats()
	if err := s.SetMemoryLimit(32 << 20); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	st := s.Stats()
	if st.LimitMaxbytes != 32<<20 || s.MemoryLimit() != 32<<20 {
		t.Fatalf("limit_maxbytes %d", st.LimitMaxbytes)
	}
	if st.CurrItems != before.CurrItems || st.Evictions != 0 {
		t.Fatalf("items %d -> %d, evictions %d", before.CurrItems, st.CurrItems, st.Evictions)
	}
	for i := range 2000 {
		v, _, ok := get(s, fmt.Sprintf("k%d", i))
		if i == 5 {
			if ok {
				t.Fatal("deleted key came back")
			}
			continue
		}
		if !ok || v != strings.Repeat("v", i%300) {
			t.Fatalf("k%d: %q %v", i, v, ok)
		}
	}
	// The bigger rings are used: far more now fits without evicting.
	for i := range 20000 {
		set(s, fmt.Sprintf("n%d", i), strings.Repeat("x", 1000))
	}
	if ev := s.Stats().Evictions; ev != 0 {
		t.Fatalf("%d evictions filling 20 MB into 32 MB", ev)
	}
	checkInvariants(t, s)
}

// Lowering the limit leaves the classes their pages, as memcached's
// cache_memlimit: items stay, and the classes stop growing, so further
// stores evict within the pages they have.
func TestSetMemoryLimitShrinkStopsGrowth(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 32 << 20, MaxItemSize: 64 << 10})
	const n = 20000
	for i := range n {
		set(s, fmt.Sprintf("k%d", i), strings.Repeat("v", 1000))
	}
	before := s.Stats()
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.CurrItems != before.CurrItems || st.TotalMallocedBytes != before.TotalMallocedBytes {
		t.Fatalf("items %d -> %d, malloced %d -> %d", before.CurrItems, st.CurrItems, before.TotalMallocedBytes, st.TotalMallocedBytes)
	}
	for i := range n {
		set(s, fmt.Sprintf("m%d", i), strings.Repeat("w", 1000))
	}
	checkInvariants(t, s)
	if after := s.Stats(); after.TotalMallocedBytes != st.TotalMallocedBytes || after.Evictions == 0 {
		t.Fatalf("malloced %d -> %d, evictions %d", st.TotalMallocedBytes, after.TotalMallocedBytes, after.Evictions)
	}
}

// A page the mover puts in the pool is released once malloced pages pass
// the limit (memcached's memory_release), and raising the limit lets the
// classes grow again.
func TestSetMemoryLimitReleasesPoolPages(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 64 << 10})
	for i := range 12000 {
		set(s, fmt.Sprintf("k%d", i), strings.Repeat("v", 1000))
	}
	class := s.ItemClass(6, 1000, 0)
	pages := s.pagesOf(class)
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	if r := s.Reassign(class, 0); r != ReassignOK {
		t.Fatalf("reassign: %v", r)
	}
	<-s.mover.done
	st := s.Stats()
	if s.pagesOf(class) != pages-1 || st.SlabGlobalPagePool != 0 || st.TotalMallocedBytes != uint64(pages-1)<<20 {
		t.Fatalf("pages %d -> %d, pool %d, malloced %d", pages, s.pagesOf(class), st.SlabGlobalPagePool, st.TotalMallocedBytes)
	}
	checkInvariants(t, s)
	if err := s.SetMemoryLimit(64 << 20); err != nil {
		t.Fatal(err)
	}
	for i := range 12000 {
		set(s, fmt.Sprintf("n%d", i), strings.Repeat("w", 1000))
	}
	if st := s.Stats(); st.TotalMallocedBytes <= uint64(pages)<<20 {
		t.Fatalf("malloced %d after raising the limit", st.TotalMallocedBytes)
	}
	checkInvariants(t, s)
}

func TestSetMemoryLimitBounds(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	if err := s.SetMemoryLimit(1 << 10); err != ErrMemoryLimit {
		t.Fatalf("tiny limit: %v", err)
	}
	if s.MemoryLimit() != 64<<20 {
		t.Fatal("refused limit changed the store")
	}
	large := newTestStore(t, Config{MemoryLimit: 64 << 20, LargePages: true})
	if err := large.SetMemoryLimit(128 << 20); err != ErrMemoryLimit {
		t.Fatalf("-L: %v", err)
	}
}

func TestSizeClassesFollowFactorAndMin(t *testing.T) {
	for _, tc := range []struct {
		min    int
		factor float64
		want   []int
	}{
		{0, 0, []int{0, 96, 120, 152, 192, 240, 304}},
		{48, 2, []int{0, 96, 192, 384, 768}},
		{100, 1.25, []int{0, 152, 192, 240}},
	} {
		got := sizeClasses(1<<20, tc.min, tc.factor, nil)
		for i, w := range tc.want {
			if got[i] != w {
				t.Fatalf("-n %d -f %v: classes %v, want prefix %v", tc.min, tc.factor, got[:len(tc.want)], tc.want)
			}
		}
		if len(got) > maxClasses+1 || got[len(got)-1] != 1<<20 {
			t.Fatalf("-n %d -f %v: %d classes ending at %d", tc.min, tc.factor, len(got), got[len(got)-1])
		}
	}
	if n := len(sizeClasses(1<<20, 48, 1.01, nil)); n != maxClasses+1 {
		t.Fatalf("-f 1.01: %d class ids, want memcached's cap %d", n-1, maxClasses)
	}
}
