package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// Goroutines increment shared counters with gets + cas. Every successful cas
// must be an increment nobody else made: the final values equal the number
// of cas hits per key.
func TestCASRace(t *testing.T) {
	tests := []struct {
		name       string
		goroutines int
		keys       int
		rounds     int
	}{
		{"one key", 8, 1, 300},
		{"few keys", 8, 4, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 1 << 20})
			for k := range tt.keys {
				set(s, fmt.Sprint("c", k), "0")
			}
			wins := make([][]int, tt.goroutines)
			var wg sync.WaitGroup
			for g := range tt.goroutines {
				wins[g] = make([]int, tt.keys)
				wg.Go(func() {
					for r := range tt.rounds {
						k := (g + r) % tt.keys
						name := []byte(fmt.Sprint("c", k))
						for {
							var n uint64
							var cas uint64
							s.Get(name, func(v []byte, m Meta) {
								n, _ = strconv.ParseUint(string(v), 10, 64)
								cas = m.CAS
							})
							res := s.Set(ModeCAS, name, 0, 0, strconv.AppendUint(nil, n+1, 10), cas)
							if res == Stored {
								wins[g][k]++
								break
							}
							if res != Exists {
								t.Errorf("cas = %v", res)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			total := 0
			for k := range tt.keys {
				want := 0
				for g := range tt.goroutines {
					want += wins[g][k]
				}
				total += want
				v, _, _ := get(s, fmt.Sprint("c", k))
				if v != strconv.Itoa(want) {
					t.Fatalf("counter %d = %s, want %d", k, v, want)
				}
			}
			st := s.Stats()
			if st.CasHits != uint64(total) || total != tt.goroutines*tt.rounds {
				t.Fatalf("cas_hits %d, wins %d, want %d", st.CasHits, total, tt.goroutines*tt.rounds)
			}
		})
	}
}

// Mixed operations from many goroutines on a small store: no value ever
// comes back belonging to another key, and the books balance afterwards.
func TestConcurrentStress(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"evicting", Config{MemoryLimit: 2 << 20, MaxItemSize: 64 << 10}},
		{"no evictions", Config{MemoryLimit: 2 << 20, MaxItemSize: 64 << 10, DisableEvictions: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			tt.cfg.Now = clk.Now
			s := newTestStore(t, tt.cfg)
			const goroutines, ops, keys = 8, 10_000, 3000
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for range ops {
						i := rng.IntN(keys)
						k := key(i)
						prefix := fmt.Appendf(nil, "%d:", i)
						check := func(v []byte, _ Meta) {
							if !bytes.HasPrefix(v, prefix) && !isCounter(v) {
								t.Errorf("key %d returned %q", i, v[:min(len(v), 20)])
							}
						}
						switch op := rng.IntN(100); {
						case op < 45:
							s.Get(k, check)
						case op < 75:
							s.Set(ModeSet, k, 0, int64(rng.IntN(3)), value(i, 8+rng.IntN(4000)), 0)
						case op < 80:
							s.Set(ModeAppend, k, 0, 0, []byte("+"), 0)
						case op < 85:
							s.Delete(k)
						case op < 88:
							s.Touch(k, int64(rng.IntN(5)))
						case op < 91:
							s.GetAndTouch(k, 0, check)
						case op < 94:
							s.IncrDecr(k, 1, rng.IntN(2) == 0)
						case op < 95:
							clk.advance(1)
						case op < 96 && g == 0:
							s.reclaim(rng.IntN(len(s.shards)), 4096)
						case op < 96 && g == 1 && rng.IntN(20) == 0:
							s.Stats()
							s.Classes()
						case op < 96 && g == 2 && rng.IntN(200) == 0:
							s.FlushAll(int64(rng.IntN(2) * 2))
						default:
							s.Set(ModeAdd, k, 0, 0, value(i, 10), 0)
						}
					}
				})
			}
			wg.Wait()
			checkInvariants(t, s)
			st := s.Stats()
			if st.TotalMallocedBytes > itemBound(s, tt.cfg.MemoryLimit) {
				t.Fatalf("malloced %d over the limit and a page per class", st.TotalMallocedBytes)
			}
			if st.CmdGet != st.GetHits+st.GetMisses || st.CmdTouch != st.TouchHits+st.TouchMisses {
				t.Fatalf("counters do not add up: %+v", st)
			}
		})
	}
}

// isCounter accepts what incr/decr leave in a value (digits, maybe padded
// with spaces) and appends may add to it.
func isCounter(v []byte) bool {
	return len(v) > 0 && len(bytes.Trim(v, "0123456789 +")) == 0
}

// The index against a model: random inserts and removals keep every
// remaining entry findable. Some tags repeat, so equal tags with different
// offsets share probe runs, as colliding keys do.
func TestIndexAgainstModel(t *testing.T) {
	type entry struct {
		tag uint32
		loc uint64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ix := newIndex(0)
	var live []entry
	for step := range 300_000 {
		if len(live) > 0 && (rng.IntN(100) < 45 || len(live) > 20_000) {
			j := rng.IntN(len(live))
			e := live[j]
			slot := ix.findLoc(e.tag, e.loc)
			if slot < 0 {
				t.Fatalf("step %d: entry %+v lost", step, e)
			}
			ix.remove(slot)
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			continue
		}
		tag := rng.Uint32()>>(32-tagBits) | 1
		if len(live) > 0 && rng.IntN(10) == 0 {
			tag = live[rng.IntN(len(live))].tag
		}
		e := entry{tag, uint64(step)}
		ix.insert(e.tag, e.loc)
		live = append(live, e)
	}
	if ix.count != len(live) {
		t.Fatalf("count %d, model %d", ix.count, len(live))
	}
	for _, e := range live {
		if ix.findLoc(e.tag, e.loc) < 0 {
			t.Fatalf("entry %+v lost", e)
		}
	}
}
