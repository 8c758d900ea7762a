package store

import (
	"strings"
	"testing"
)

// The expectations come from memcached 1.6.18 on loopback.
func TestParseCounter(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"10", 10, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"00000000000000000001", 1, true},
		{"000000000000000000001", 1, true}, // 21 bytes: length alone is no limit
		{"0000000000000000000000009", 9, true},
		{"12 abc", 12, true},
		{" 12", 12, true},
		{"12 ", 12, true},
		{"12\t", 12, true},
		{"7\n", 7, true},
		{"5\x00", 5, true},
		{"+5", 5, true},
		{"-0 ", 0, true},
		{"-12", 0, false},
		{"-9223372036854775808", 0, false},
		{"-18446744073709551615", 1, true}, // strtoull negates modulo 2^64
		{"", 0, false},
		{" ", 0, false},
		{"  ", 0, false},
		{"+", 0, false},
		{"1a", 0, false},
		{"0x5", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseCounter([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseCounter(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIncrDecr(t *testing.T) {
	tests := []struct {
		name      string
		initial   string
		delta     uint64
		decr      bool
		want      uint64
		wantRes   Result
		wantValue string // stored value afterwards
	}{
		{"incr", "10", 5, false, 15, Stored, "15"},
		{"incr grows", "9", 1, false, 10, Stored, "10"},
		{"decr pads in place", "10", 1, true, 9, Stored, "9 "},
		{"decr floors at 0", "5", 9, true, 0, Stored, "0"},
		{"decr to 0 from 0", "0", 1, true, 0, Stored, "0"},
		{"incr wraps", "18446744073709551615", 2, false, 1, Stored, "1" + strings.Repeat(" ", 19)},
		{"incr max delta", "1", 1<<64 - 1, false, 0, Stored, "0"},
		{"20 digits in place", "00000000000000000001", 1, false, 2, Stored, "2" + strings.Repeat(" ", 19)},
		{"trailing text", "12 abc", 1, false, 13, Stored, "13    "},
		{"non-numeric", "x", 1, false, 0, NonNumeric, "x"},
		{"empty", "", 1, false, 0, NonNumeric, ""},
		{"negative", "-12", 1, true, 0, NonNumeric, "-12"},
		{"overflowing text", "18446744073709551616", 1, false, 0, NonNumeric, "18446744073709551616"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
			s.Set(ModeSet, []byte("n"), 42, 1000, []byte(tt.initial), 0)
			_, before, _ := get(s, "n")
			got, res := s.IncrDecr([]byte("n"), tt.delta, tt.decr)
			if got != tt.want || res != tt.wantRes {
				t.Fatalf("IncrDecr = %d, %v; want %d, %v", got, res, tt.want, tt.wantRes)
			}
			v, m, ok := get(s, "n")
			if !ok || v != tt.wantValue {
				t.Fatalf("value afterwards %q (hit %v), want %q", v, ok, tt.wantValue)
			}
			if m.Flags != 42 || m.Exptime != before.Exptime {
				t.Fatalf("flags %d exptime %d, want the old %d and %d", m.Flags, m.Exptime, 42, before.Exptime)
			}
			if (m.CAS != before.CAS) != (res == Stored) {
				t.Fatalf("cas %d -> %d after result %v", before.CAS, m.CAS, res)
			}
			checkInvariants(t, s)
		})
	}
}

func TestIncrDecrCounters(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	set(s, "n", "1")
	set(s, "x", "abc")
	s.IncrDecr([]byte("n"), 1, false)
	s.IncrDecr([]byte("n"), 1, true)
	s.IncrDecr([]byte("missing"), 1, false)
	s.IncrDecr([]byte("missing"), 1, true)
	s.IncrDecr([]byte("x"), 1, false) // memcached counts nothing for non-numeric
	set(s, "g", "9")
	s.IncrDecr([]byte("g"), 1, false) // "10" no longer fits: a new item
	st := s.Stats()
	if st.IncrHits != 2 || st.DecrHits != 1 || st.IncrMisses != 1 || st.DecrMisses != 1 {
		t.Fatalf("incr/decr counters %+v", st)
	}
	// As memcached 1.6.18: 3 sets plus the item the growing incr linked.
	if st.TotalItems != 4 || st.CurrItems != 3 {
		t.Fatalf("total_items %d curr_items %d, want 4 and 3", st.TotalItems, st.CurrItems)
	}
}

// An item larger than SlabChunkMax (memcached's size: 48 + key + 1 +
// value + 2 + 8 for the CAS) is one memcached stores in chunks, and
// incr/decr refuse it as non-numeric before they compare a CAS; at the
// limit it is a number.
func TestArithRefusesChunkedItems(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, SlabChunkMax: 512 << 10})
	for _, tc := range []struct {
		vlen int
		want Result
	}{{2, Stored}, {524228, Stored}, {524229, NonNumeric}, {600000, NonNumeric}} {
		v := []byte("12" + strings.Repeat(" ", tc.vlen-2))
		if r := s.Set(ModeSet, []byte("a"), 0, 0, v, 0); r != Stored {
			t.Fatalf("set %d bytes: %v", tc.vlen, r)
		}
		nop := func(Item, uint64, bool) {}
		if r := s.Arith([]byte("a"), ArithRequest{Delta: 1, CAS: 12345}, nop); tc.want == NonNumeric && r != NonNumeric {
			t.Errorf("incr with a wrong CAS on %d bytes: %v, want NonNumeric", tc.vlen, r)
		}
		if r := s.Arith([]byte("a"), ArithRequest{Delta: 1}, nop); r != tc.want {
			t.Errorf("incr on %d bytes: %v, want %v", tc.vlen, r, tc.want)
		}
	}
}

// memcached changes a counter in place only when no one else holds the
// item (refcount == 2); a reader sending the old value in pieces keeps it
// whole.
func TestIncrDoesNotChangePinnedValue(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	old := "5 " + strings.Repeat("x", 100<<10) // numeric: strtoull stops at the space
	set(s, "n", old)
	var ref ValueRef
	s.Get([]byte("n"), func(v []byte, _ Meta) { ref = s.RefOf([]byte("n"), v) })
	if v, res := s.IncrDecr([]byte("n"), 1, false); res != Stored || v != 6 {
		t.Fatalf("incr = %d, %v", v, res)
	}
	got := make([]byte, ref.Len())
	if !s.CopyValue(ref, 0, got) || string(got) != old {
		t.Errorf("the pinned value changed under its reader: %q...", got[:min(len(got), 12)])
	}
	s.ReleaseRef(ref)
	if v, _, _ := get(s, "n"); strings.TrimRight(v, " ") != "6" {
		t.Errorf("n = %q..., want 6", v[:min(len(v), 12)])
	}
}
