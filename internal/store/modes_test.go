package store

import "testing"

// step is one store command of a table-driven script and what it must return.
type step struct {
	mode   Mode
	key    string
	flags  uint32
	exp    int64
	value  string
	useCAS bool // send the CAS unique of the key's last get (ModeCAS)
	badCAS bool // send a CAS unique off by one
	want   Result
}

func TestSetModes(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		wantValue string // "" with wantMiss false means empty value
		wantMiss  bool
		wantFlags uint32
	}{
		{"set", []step{{mode: ModeSet, key: "k", flags: 7, value: "v", want: Stored}}, "v", false, 7},
		{"set overwrites", []step{
			{mode: ModeSet, key: "k", flags: 1, value: "one", want: Stored},
			{mode: ModeSet, key: "k", flags: 2, value: "two", want: Stored},
		}, "two", false, 2},
		{"add missing", []step{{mode: ModeAdd, key: "k", value: "v", want: Stored}}, "v", false, 0},
		{"add existing", []step{
			{mode: ModeSet, key: "k", value: "a", want: Stored},
			{mode: ModeAdd, key: "k", value: "b", want: NotStored},
		}, "a", false, 0},
		{"replace missing", []step{{mode: ModeReplace, key: "k", value: "v", want: NotStored}}, "", true, 0},
		{"replace existing", []step{
			{mode: ModeSet, key: "k", value: "a", want: Stored},
			{mode: ModeReplace, key: "k", flags: 9, value: "b", want: Stored},
		}, "b", false, 9},
		{"append keeps flags", []step{
			{mode: ModeSet, key: "k", flags: 3, value: "ab", want: Stored},
			{mode: ModeAppend, key: "k", flags: 9, value: "cd", want: Stored},
		}, "abcd", false, 3},
		{"prepend keeps flags", []step{
			{mode: ModeSet, key: "k", flags: 3, value: "ab", want: Stored},
			{mode: ModePrepend, key: "k", flags: 9, value: "xy", want: Stored},
		}, "xyab", false, 3},
		{"append missing", []step{{mode: ModeAppend, key: "k", value: "v", want: NotStored}}, "", true, 0},
		{"prepend missing", []step{{mode: ModePrepend, key: "k", value: "v", want: NotStored}}, "", true, 0},
		{"cas missing", []step{{mode: ModeCAS, key: "k", value: "v", want: NotFound}}, "", true, 0},
		{"cas match", []step{
			{mode: ModeSet, key: "k", value: "a", want: Stored},
			{mode: ModeCAS, key: "k", value: "b", useCAS: true, want: Stored},
		}, "b", false, 0},
		{"cas mismatch", []step{
			{mode: ModeSet, key: "k", value: "a", want: Stored},
			{mode: ModeCAS, key: "k", value: "b", badCAS: true, want: Exists},
		}, "a", false, 0},
		{"empty value", []step{{mode: ModeSet, key: "k", value: "", want: Stored}}, "", false, 0},
		{"negative exptime deletes", []step{
			{mode: ModeSet, key: "k", value: "a", want: Stored},
			{mode: ModeSet, key: "k", value: "b", exp: -1, want: Stored},
		}, "", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: newFakeClock().Now})
			for i, st := range tt.steps {
				var cas uint64
				if st.useCAS || st.badCAS {
					_, m, _ := get(s, st.key)
					cas = m.CAS
					if st.badCAS {
						cas++
					}
				}
				if got := s.Set(st.mode, []byte(st.key), st.flags, st.exp, []byte(st.value), cas); got != st.want {
					t.Fatalf("step %d: Set(%v, %q) = %v, want %v", i, st.mode, st.key, got, st.want)
				}
			}
			v, m, ok := get(s, "k")
			if ok == tt.wantMiss {
				t.Fatalf("get hit = %v, want %v", ok, !tt.wantMiss)
			}
			if ok && (v != tt.wantValue || m.Flags != tt.wantFlags) {
				t.Fatalf("get = %q flags %d, want %q flags %d", v, m.Flags, tt.wantValue, tt.wantFlags)
			}
			checkInvariants(t, s)
		})
	}
}

func TestCASUniques(t *testing.T) {
	for _, disable := range []bool{false, true} {
		s := newTestStore(t, Config{MemoryLimit: 1 << 20, DisableCAS: disable})
		seen := map[uint64]string{}
		for _, k := range []string{"a", "b", "c", "a", "b"} {
			set(s, k, "v")
			_, m, _ := get(s, k)
			if disable {
				if m.CAS != 0 {
					t.Fatalf("DisableCAS: cas of %q = %d, want 0", k, m.CAS)
				}
				// memcached -C: every cas command fails with EXISTS.
				if r := s.Set(ModeCAS, []byte(k), 0, 0, []byte("x"), 0); r != Exists {
					t.Fatalf("DisableCAS: cas = %v, want Exists", r)
				}
				continue
			}
			if m.CAS == 0 {
				t.Fatalf("cas of %q is 0", k)
			}
			if other, dup := seen[m.CAS]; dup {
				t.Fatalf("cas %d given to %q and %q", m.CAS, other, k)
			}
			seen[m.CAS] = k
		}
	}
}

func TestTooLargeSetRemovesOld(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1024})
	set(s, "k", "old")
	big := make([]byte, s.MaxValueSize(1, 0)+1)
	if r := s.Set(ModeSet, []byte("k"), 0, 0, big, 0); r != TooLarge {
		t.Fatalf("Set too large = %v, want TooLarge", r)
	}
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("old value still visible after a failed set, memcached unlinks it")
	}
	set(s, "a", "x")
	// memcached 1.6.18 answers NOT_STORED to an append beyond -I.
	if r := s.Set(ModeAppend, []byte("a"), 0, 0, big[:len(big)-1], 0); r != NotStored {
		t.Fatalf("append beyond the item size = %v, want NotStored", r)
	}
	if v, _, _ := get(s, "a"); v != "x" {
		t.Fatalf("after failed append value = %q, want x", v)
	}
}

// The largest value is the one memcached 1.6.18 accepts: -I minus the key
// and 59 bytes (51 without CAS), 4 bytes less with nonzero flags (its
// item's suffix). An append is refused (NOT_STORED) past the same room,
// counted with the item's flags.
func TestMaxValueSizeMatchesMemcached(t *testing.T) {
	tests := []struct {
		disableCAS bool
		keyLen     int
		flags      uint32
		want       int
	}{
		{false, 1, 0, 1048516},
		{false, 100, 0, 1048417},
		{false, 250, 0, 1048267},
		{true, 1, 0, 1048524},
		{false, 1, 1, 1048512},
		{true, 250, 0xffffffff, 1048271},
	}
	for _, tt := range tests {
		s := newTestStore(t, Config{MemoryLimit: 64 << 20, DisableCAS: tt.disableCAS})
		if got := s.MaxValueSize(tt.keyLen, tt.flags); got != tt.want {
			t.Errorf("MaxValueSize(%d, %d) with DisableCAS=%v = %d, want %d", tt.keyLen, tt.flags, tt.disableCAS, got, tt.want)
		}
		k := make([]byte, tt.keyLen)
		for i := range k {
			k[i] = 'k'
		}
		if r := s.Set(ModeSet, k, tt.flags, 0, make([]byte, tt.want), 0); r != Stored {
			t.Errorf("value of %d bytes, flags %d = %v, want Stored", tt.want, tt.flags, r)
		}
		if r := s.Set(ModeAppend, k, 0, 0, []byte("x"), 0); r != NotStored {
			t.Errorf("append past %d bytes, flags %d = %v, want NotStored", tt.want, tt.flags, r)
		}
		if r := s.Set(ModeSet, k, tt.flags, 0, make([]byte, tt.want-1), 0); r != Stored {
			t.Errorf("value of %d bytes, flags %d = %v, want Stored", tt.want-1, tt.flags, r)
		}
		if r := s.Set(ModeAppend, k, 0, 0, []byte("x"), 0); r != Stored {
			t.Errorf("append up to %d bytes, flags %d = %v, want Stored", tt.want, tt.flags, r)
		}
		if r := s.Set(ModeSet, k, tt.flags, 0, make([]byte, tt.want+1), 0); r != TooLarge {
			t.Errorf("value of %d bytes, flags %d = %v, want TooLarge", tt.want+1, tt.flags, r)
		}
	}
}

func TestKeyLengthLimit(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	for _, n := range []int{MaxKeyLen, MaxKeyLen + 1, 300} {
		k := make([]byte, n)
		for i := range k {
			k[i] = 'k'
		}
		want := Stored
		if n > MaxKeyLen {
			want = TooLarge
		}
		if r := s.Set(ModeSet, k, 0, 0, []byte("v"), 0); r != want {
			t.Errorf("key of %d bytes: Set = %v, want %v", n, r, want)
		}
		if hit := s.Get(k, func([]byte, Meta) {}); hit != (want == Stored) {
			t.Errorf("key of %d bytes: Get hit = %v", n, hit)
		}
	}
	checkInvariants(t, s)
}
