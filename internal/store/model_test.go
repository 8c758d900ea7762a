package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// modelItem is what the model remembers about a key.
type modelItem struct {
	value   []byte
	flags   uint32
	exptime int64 // absolute, 0 = never
	cas     uint64
}

// model is the obvious map implementation of the store's semantics, for
// configurations where nothing is evicted.
type model struct {
	items map[string]*modelItem
	now   func() int64
}

func (m *model) live(k string) *modelItem {
	it := m.items[k]
	if it != nil && it.exptime != 0 && it.exptime <= m.now() {
		delete(m.items, k)
		return nil
	}
	return it
}

// Random operations on a store and on the model must agree exactly. The
// ring is small relative to what is written, so records wrap around and
// dead ones are reclaimed many times; -M means nothing live is ever dropped.
func TestAgainstModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			clk := newFakeClock()
			s := newTestStore(t, Config{MemoryLimit: 2 << 20, MaxItemSize: 16 << 10, DisableEvictions: true, Now: clk.Now})
			m := &model{items: map[string]*modelItem{}, now: clk.Now}
			rng := rand.New(rand.NewPCG(seed, 99))
			for step := range 60_000 {
				k := fmt.Sprint("k", rng.IntN(300))
				modelStep(t, s, m, clk, rng, k, step)
				if step%5000 == 0 {
					checkInvariants(t, s)
				}
			}
			checkInvariants(t, s)
			s.Crawl() // flushed items count in curr_items until met or crawled
			if st := s.Stats(); st.CurrItems > uint64(len(m.items)) || st.Evictions != 0 || st.OutOfMemory != 0 {
				t.Fatalf("curr_items %d (model %d) evictions %d oom %d", st.CurrItems, len(m.items), st.Evictions, st.OutOfMemory)
			}
		})
	}
}

func modelStep(t *testing.T, s *Store, m *model, clk *fakeClock, rng *rand.Rand, k string, step int) {
	t.Helper()
	kb := []byte(k)
	it := m.live(k)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d key %s: %s", step, k, fmt.Sprintf(format, args...))
	}
	switch op := rng.IntN(100); {
	case op < 30: // get
		var got []byte
		var meta Meta
		hit := s.Get(kb, func(v []byte, mm Meta) { got, meta = bytes.Clone(v), mm })
		if hit != (it != nil) {
			fail("get hit %v, model %v", hit, it != nil)
		}
		if hit && (!bytes.Equal(got, it.value) || meta.Flags != it.flags || meta.Exptime != it.exptime || meta.CAS != it.cas) {
			fail("get %q %+v, model %q %+v", got, meta, it.value, *it)
		}
	case op < 60: // set family
		modes := []Mode{ModeSet, ModeAdd, ModeReplace, ModeAppend, ModePrepend, ModeCAS}
		mode := modes[rng.IntN(len(modes))]
		v := bytes.Repeat([]byte{byte('a' + step%26)}, rng.IntN(2000))
		flags := rng.Uint32()
		exp := []int64{0, 0, 5, 100, -1}[rng.IntN(5)]
		var cas uint64
		if it != nil && rng.IntN(2) == 0 {
			cas = it.cas
		}
		got := s.Set(mode, kb, flags, exp, v, cas)
		want := Stored
		switch {
		case mode == ModeAdd && it != nil, (mode == ModeReplace || mode == ModeAppend || mode == ModePrepend) && it == nil:
			want = NotStored
		case mode == ModeCAS && it == nil:
			want = NotFound
		case mode == ModeCAS && it.cas != cas:
			want = Exists
		}
		if got != want {
			fail("Set(%v) = %v, model %v", mode, got, want)
		}
		if got != Stored {
			return
		}
		switch mode {
		case ModeAppend:
			it.value = append(it.value, v...)
		case ModePrepend:
			it.value = append(v, it.value...)
		default:
			abs := int64(absExptime(exp, m.now()))
			if exp == 0 {
				abs = 0
			}
			if abs != 0 && abs <= m.now() {
				delete(m.items, k)
				return
			}
			it = &modelItem{value: v, flags: flags, exptime: abs}
			m.items[k] = it
		}
		s.Get(kb, func(_ []byte, mm Meta) { it.cas = mm.CAS })
	case op < 68:
		hit := s.Delete(kb)
		if hit != (it != nil) {
			fail("delete %v, model %v", hit, it != nil)
		}
		delete(m.items, k)
	case op < 75:
		exp := []int64{0, 3, 50, -1}[rng.IntN(4)]
		hit := s.Touch(kb, exp)
		if hit != (it != nil) {
			fail("touch %v, model %v", hit, it != nil)
		}
		if hit {
			it.exptime = int64(absExptime(exp, m.now()))
		}
	case op < 85:
		if it != nil && rng.IntN(3) == 0 {
			s.Set(ModeSet, kb, it.flags, 0, []byte(strconv.Itoa(rng.IntN(1000))), 0)
			it.value, it.exptime = []byte(nil), 0
			s.Get(kb, func(v []byte, mm Meta) { it.value, it.cas = bytes.Clone(v), mm.CAS })
		}
		decr := rng.IntN(2) == 0
		delta := uint64(rng.IntN(500))
		got, res := s.IncrDecr(kb, delta, decr)
		switch {
		case it == nil:
			if res != NotFound {
				fail("incr on missing = %v", res)
			}
			return
		case !isCounterValue(it.value):
			if res != NonNumeric {
				fail("incr on %q = %v", it.value, res)
			}
			return
		}
		cur, _ := parseCounter(it.value)
		if decr {
			cur -= min(cur, delta)
		} else {
			cur += delta
		}
		if res != Stored || got != cur {
			fail("incr/decr = %d %v, model %d", got, res, cur)
		}
		s.Get(kb, func(v []byte, mm Meta) { it.value, it.cas = bytes.Clone(v), mm.CAS })
	case op < 88:
		clk.advance(int64(rng.IntN(4)))
	case op < 89:
		s.FlushAll(0)
		clear(m.items)
	default:
		s.reclaim(rng.IntN(len(s.shards)), 2048)
	}
}

func isCounterValue(v []byte) bool {
	_, ok := parseCounter(v)
	return ok
}
