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

func TestSetMemoryLimitShrinkEvictsOldest(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 32 << 20, MaxItemSize: 64 << 10})
	const n = 20000
	for i := range n {
		set(s, fmt.Sprintf("k%d", i), strings.Repeat("v", 1000))
	}
	if err := s.SetMemoryLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	st := s.Stats()
	if st.Bytes > 8<<20 || st.Evictions == 0 || st.CurrItems+st.Evictions != n {
		t.Fatalf("bytes %d items %d evictions %d", st.Bytes, st.CurrItems, st.Evictions)
	}
	// The newest items survive: eviction order is kept.
	if _, _, ok := get(s, fmt.Sprintf("k%d", n-1)); !ok {
		t.Fatal("newest item evicted")
	}
	if _, _, ok := get(s, "k0"); ok {
		t.Fatal("oldest item survived a 4x shrink")
	}
	// The store keeps working at the new size.
	for i := range n {
		set(s, fmt.Sprintf("m%d", i), strings.Repeat("w", 1000))
	}
	checkInvariants(t, s)
	if b := s.Stats().Bytes; b > 8<<20 {
		t.Fatalf("%d bytes live in 8 MiB", b)
	}
}

func TestSetMemoryLimitReclaimsExpired(t *testing.T) {
	clock := newFakeClock()
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, Now: clock.Now})
	s.Set(ModeSet, []byte("a"), 0, 10, []byte("x"), 0)
	set(s, "b", "y")
	clock.advance(20)
	if err := s.SetMemoryLimit(16 << 20); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if st := s.Stats(); st.CurrItems != 1 || st.Reclaimed != 1 {
		t.Fatalf("items %d reclaimed %d", st.CurrItems, st.Reclaimed)
	}
}

func TestSetMemoryLimitBounds(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	if err := s.SetMemoryLimit(1 << 10); err != ErrMemoryLimit {
		t.Fatalf("tiny limit: %v", err)
	}
	if s.MemoryLimit() != 64<<20 {
		t.Fatal("refused limit changed the store")
	}
	noEvict := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 64 << 10, DisableEvictions: true})
	for i := range 12000 {
		set(noEvict, fmt.Sprintf("k%d", i), strings.Repeat("v", 1000))
	}
	if err := noEvict.SetMemoryLimit(8 << 20); err != ErrMemoryLimit {
		t.Fatalf("-M shrink below live items: %v", err)
	}
	if err := noEvict.SetMemoryLimit(32 << 20); err != nil {
		t.Fatalf("-M grow: %v", err)
	}
	checkInvariants(t, noEvict)
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
