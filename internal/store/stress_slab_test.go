package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// accountChunks stops the store (every shard, then every class) and checks
// that every chunk ever handed out of every page is exactly one of: free,
// queued (and so indexed), pinned by an orphaned pin, or one of the
// outstanding reservations given.
func (s *Store) accountChunks(reservations []int) error {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	sl := s.slabs
	for id := 1; id < len(sl.classes); id++ {
		sl.classes[id].mu.Lock()
	}
	defer func() {
		for id := 1; id < len(sl.classes); id++ {
			sl.classes[id].mu.Unlock()
		}
	}()
	seen := map[uint64]string{}
	mark := func(pos uint64, what string) error {
		if w, ok := seen[pos]; ok {
			return fmt.Errorf("chunk %d is both %s and %s", pos, w, what)
		}
		seen[pos] = what
		return nil
	}
	for id := 1; id < len(sl.classes); id++ {
		c := &sl.classes[id]
		for pos := c.free; pos != nilLoc; pos = sl.rec(pos).next() {
			if err := mark(pos, "free"); err != nil {
				return err
			}
		}
		for qi := range c.q {
			for pos := c.q[qi].head; pos != nilLoc; pos = sl.rec(pos).next() {
				if err := mark(pos, fmt.Sprintf("queued(%d)", qi)); err != nil {
					return err
				}
			}
		}
	}
	for i := range s.shards {
		for pos, p := range s.shards[i].pins {
			if !p.orphan {
				if w := seen[uint64(pos)]; len(w) < 6 || w[:6] != "queued" {
					return fmt.Errorf("shard %d: pin on %d (%d refs) of a chunk %q, not queued nor orphaned", i, pos, p.n, w)
				}
				continue
			}
			if err := mark(uint64(pos), "orphan"); err != nil {
				return err
			}
		}
	}
	for _, pos := range reservations {
		if err := mark(uint64(pos), "reserved"); err != nil {
			return err
		}
	}
	heads := make([]uint64, 0, len(seen))
	for pos, what := range seen {
		if what != "free" && sl.chained(sl.rec(pos)) {
			heads = append(heads, pos)
		}
	}
	for _, pos := range heads {
		for l := sl.firstLink(sl.rec(pos)); l != nilLoc; l = sl.rec(l).next() {
			if err := mark(l, "link"); err != nil {
				return err
			}
		}
	}
	a := sl.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	handed := 0
	inUse := 0
	listed := map[int]int{}
	for id := 1; id < len(sl.classes); id++ {
		for _, p := range sl.classes[id].pageList {
			if o, ok := listed[int(p)]; ok {
				return fmt.Errorf("page %d in the page lists of classes %d and %d", p, o, id)
			}
			listed[int(p)] = id
		}
	}
	for _, p := range a.pool {
		if a.owner[p] != 0 {
			return fmt.Errorf("pooled page %d owned by %#x", p, a.owner[p])
		}
	}
	for p := 0; p < a.front; p++ {
		o := a.owner[p]
		switch {
		case o == 0:
			continue
		}
		inUse++
		c := &sl.classes[o]
		if listed[p] != int(o) {
			return fmt.Errorf("page %d of class %d is in class %d's page list", p, o, listed[p])
		}
		start := uint64(p) * pageSize
		n := c.perPage
		if c.carveLeft > 0 && c.carve/pageSize == uint64(p) {
			n = int(c.carve-start) / c.size
		}
		for i := range n {
			handed++
			pos := start + uint64(i*c.size)
			if _, ok := seen[pos]; !ok {
				r := sl.rec(pos)
				return fmt.Errorf("class %d chunk %d (page %d) leaked: key %q bits %#x queue %d", o, pos, p, r.key(), r.bits(), r.queue())
			}
		}
	}
	if handed != len(seen) {
		return fmt.Errorf("%d chunks handed out, %d accounted", handed, len(seen))
	}
	if inUse+len(a.pool) != a.malloced {
		return fmt.Errorf("arena counts %d pages malloced, owners say %d and the pool holds %d", a.malloced, inUse, len(a.pool))
	}
	return nil
}

// A value names itself: 8 bytes of seed, 8 of length, then bytes derived
// from the seed, so any copy of it can be checked without the store.
func makeValue(seed uint64, n int) []byte {
	n = max(n, 16)
	v := make([]byte, n)
	binary.LittleEndian.PutUint64(v, seed)
	binary.LittleEndian.PutUint64(v[8:], uint64(n))
	for i := 16; i < n; i++ {
		v[i] = byte(seed + uint64(i)*31)
	}
	return v
}

func checkValue(v []byte) error {
	if len(v) < 16 {
		return fmt.Errorf("value of %d bytes", len(v))
	}
	seed := binary.LittleEndian.Uint64(v)
	if n := binary.LittleEndian.Uint64(v[8:]); n != uint64(len(v)) {
		return fmt.Errorf("value of %d bytes says %d", len(v), n)
	}
	for i := 16; i < len(v); i++ {
		if v[i] != byte(seed+uint64(i)*31) {
			return fmt.Errorf("value of %d bytes (seed %d) differs at %d", len(v), seed, i)
		}
	}
	return nil
}

// An appended value is blocks "<len>:<len bytes of one letter>;".
func checkAppended(v []byte) error {
	for len(v) > 0 {
		c := bytes.IndexByte(v, ':')
		if c < 0 {
			return fmt.Errorf("no ':' in %q", v[:min(len(v), 40)])
		}
		n, err := strconv.Atoi(string(v[:c]))
		if err != nil || c+1+n+1 > len(v) {
			return fmt.Errorf("bad block head %q", v[:min(len(v), 40)])
		}
		b := v[c+1 : c+1+n]
		for _, x := range b {
			if x != b[0] {
				return fmt.Errorf("block of %d mixes %q and %q", n, b[0], x)
			}
		}
		if v[c+1+n] != ';' {
			return fmt.Errorf("block of %d not closed", n)
		}
		v = v[c+1+n+1:]
	}
	return nil
}

func appendBlock(rng *rand.Rand, n int) []byte {
	b := strconv.AppendInt(nil, int64(n), 10)
	b = append(b, ':')
	b = append(b, bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, n)...)
	return append(b, ';')
}

type heldRef struct {
	ref ValueRef
	n   int
}

type stressCfg struct {
	limit, maxItem int64
	big            int // largest value
	goroutines     int
	dur            time.Duration
	keys           int
	mover          bool // Reassign calls and slab_automove 2
}

func runSlabStress(t *testing.T, sc stressCfg) {
	heapArena = true // records in the race detector's sight
	defer func() { heapArena = false }()
	s := newTestStore(t, Config{MemoryLimit: sc.limit, MaxItemSize: int(sc.maxItem)})
	var mu sync.Mutex
	var errs []string
	fail := func(format string, a ...any) {
		mu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, a...))
		}
		mu.Unlock()
	}
	if sc.mover {
		s.SetAutomove(2, 0.8, 3)
	}
	deadline := time.Now().Add(sc.dur)
	leftRefs := make([][]heldRef, sc.goroutines)
	leftRes := make([][]*Reservation, sc.goroutines)
	var wg sync.WaitGroup
	for g := range sc.goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			var refs []heldRef
			var reserved []*Reservation
			size := func() int {
				switch rng.IntN(10) {
				case 0, 1:
					return 16 + rng.IntN(sc.big)
				case 2, 3:
					return 16 + rng.IntN(100<<10)
				default:
					return 16 + rng.IntN(2000)
				}
			}
			for op := 0; op < 200000 && time.Now().Before(deadline); op++ {
				k := rng.IntN(sc.keys)
				key := fmt.Appendf(nil, "k%d", k)
				switch x := rng.IntN(100); {
				case x < 25:
					s.Set(ModeSet, key, uint32(rng.IntN(3)), int64(rng.IntN(3)), makeValue(rng.Uint64(), size()), 0)
				case x < 45:
					var ref ValueRef
					s.Get(key, func(v []byte, _ Meta) {
						if err := checkValue(v); err != nil {
							fail("get %s: %v", key, err)
						}
						if rng.IntN(3) == 0 {
							ref = s.RefOf(key, v)
							if !ref.ok {
								fail("RefOf %s refused", key)
							}
						}
					})
					if ref.ok {
						refs = append(refs, heldRef{ref, ref.Len()})
					}
				case x < 50:
					s.Delete(key)
				case x < 55:
					s.Touch(key, int64(rng.IntN(3)))
				case x < 62:
					ak := fmt.Appendf(nil, "a%d", k%50)
					blk := appendBlock(rng, rng.IntN(3000))
					if s.Set(ModeAppend, ak, 0, 0, blk, 0) == NotStored {
						s.Set(ModeAdd, ak, 0, 0, blk, 0)
					}
					s.Get(ak, func(v []byte, _ Meta) {
						if err := checkAppended(v); err != nil {
							fail("append %s: %v", ak, err)
						}
					})
					if rng.IntN(20) == 0 {
						s.Delete(ak)
					}
				case x < 66:
					ik := fmt.Appendf(nil, "i%d", k%20)
					if _, res := s.IncrDecr(ik, uint64(rng.IntN(1<<30)), rng.IntN(2) == 0); res == NotFound {
						s.Set(ModeAdd, ik, 0, 0, []byte("1"), 0)
					}
				case x < 76:
					n := size()
					rv := s.Reserve(key, n)
					v := makeValue(rng.Uint64(), n)
					if rng.IntN(4) == 0 {
						fillAt(s, &rv, 0, v[:n/2], 4096)
						if rng.IntN(2) == 0 {
							s.ReleaseReserved(&rv)
						} else {
							fillAt(s, &rv, n/2, v[n/2:], 4096) // held whole, committed later
							reserved = append(reserved, &rv)
						}
						break
					}
					fillAt(s, &rv, 0, v, 64<<10)
					mode := ModeSet
					if rng.IntN(5) == 0 {
						mode = ModeAdd
					}
					s.CommitReserved(&rv, SetRequest{Mode: mode, Key: key, Flags: uint32(rng.IntN(2))})
				case x < 86:
					// finish some held refs
					for len(refs) > 0 && rng.IntN(3) != 0 {
						h := refs[len(refs)-1]
						refs = refs[:len(refs)-1]
						buf := make([]byte, h.n)
						for off := 0; off < h.n; off += 64 << 10 {
							end := min(h.n, off+64<<10)
							if !s.CopyValue(h.ref, off, buf[off:end]) {
								fail("CopyValue lost a pinned value")
								break
							}
						}
						if err := checkValue(buf); err != nil {
							fail("pinned value: %v", err)
						}
						s.ReleaseRef(h.ref)
					}
				case x < 90:
					for len(reserved) > 0 && rng.IntN(2) == 0 {
						rv := reserved[len(reserved)-1]
						reserved = reserved[:len(reserved)-1]
						if rng.IntN(2) == 0 {
							s.ReleaseReserved(rv)
						} else {
							s.CommitReserved(rv, SetRequest{Mode: ModeSet, Key: s.rec0Key(rv)})
						}
					}
				case x < 91:
					if rng.IntN(20) == 0 {
						s.FlushAll(0)
					}
				case x < 92:
					if rng.IntN(10) == 0 {
						s.SetMemoryLimit(sc.limit/2 + int64(rng.IntN(int(sc.limit))))
					}
				case x < 95:
					s.MetaGet(fmt.Appendf(nil, "m%d", k%30), true, NewCAS{}, func(it Item, _ bool) bool { it.Bump(); return false })
				case x < 97:
					s.DeleteItem(key, DeleteRequest{Invalidate: true})
				case x < 99:
					if sc.mover {
						s.Reassign(rng.IntN(len(s.slabs.classes)+1)-1, rng.IntN(len(s.slabs.classes)))
					}
				default:
					if rng.IntN(20) == 0 {
						s.Crawl()
					}
				}
			}
			leftRefs[g], leftRes[g] = refs, reserved
		})
	}
	wg.Wait()
	s.SetAutomove(0, 0, 0)
	defer s.holdMover()() // a move waiting for the refs below would wait for ever
	for _, e := range errs {
		t.Error(e)
	}
	var rpos []int
	nrefs := 0
	for g := range leftRes {
		for _, rv := range leftRes[g] {
			if rv.ok {
				rpos = append(rpos, rv.ref.pos)
			}
		}
		nrefs += len(leftRefs[g])
	}
	t.Logf("outstanding: %d refs, %d reservations; mover %+v; evictions %d oom %d", nrefs, len(rpos), s.MoverStats(), s.Stats().Evictions, s.Stats().OutOfMemory)
	if err := s.accountChunks(rpos); err != nil {
		t.Fatalf("with refs and reservations outstanding: %v", err)
	}
	for g := range leftRes {
		for _, h := range leftRefs[g] {
			s.ReleaseRef(h.ref)
		}
		for _, rv := range leftRes[g] {
			s.ReleaseReserved(rv)
		}
	}
	checkInvariants(t, s)
	if err := s.accountChunks(nil); err != nil {
		t.Fatalf("after releases: %v", err)
	}
	malloced, _ := s.slabs.arena.usage()
	if got, bound := uint64(malloced)*pageSize, itemBound(s, max(sc.limit, s.MemoryLimit())*3/2); got > bound {
		t.Errorf("malloced %d past %d", got, bound)
	}
	for i := range s.shards {
		if n := len(s.shards[i].pins); n != 0 {
			t.Errorf("shard %d: %d pins left", i, n)
		}
	}
}

// rec0Key is the key a reservation's chunk was written with. A lost
// reservation (Reserve found no room) has no chunk: its zero position is
// the arena's first chunk, someone else's, so it gets a key of its own.
func (s *Store) rec0Key(rv *Reservation) []byte {
	if rv.Lost() {
		return []byte("lost-reservation")
	}
	sh := &s.shards[rv.ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return append([]byte(nil), s.slabs.rec(uint64(rv.ref.pos)).key()...)
}

func TestSlabStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	for _, sc := range []stressCfg{
		{limit: 2 << 20, maxItem: 1 << 20, big: 300 << 10, goroutines: 6, dur: 4 * time.Second, keys: 200},
		{limit: 4 << 20, maxItem: 1 << 20, big: 900 << 10, goroutines: 6, dur: 4 * time.Second, keys: 100},
		{limit: 3 << 20, maxItem: 2 << 20, big: 1500 << 10, goroutines: 6, dur: 4 * time.Second, keys: 100},
		{limit: 4 << 20, maxItem: 1 << 20, big: 900 << 10, goroutines: 6, dur: 6 * time.Second, keys: 100, mover: true},
		{limit: 2 << 20, maxItem: 1 << 20, big: 300 << 10, goroutines: 6, dur: 6 * time.Second, keys: 300, mover: true},
		{limit: 16 << 20, maxItem: 1 << 20, big: 700 << 10, goroutines: 6, dur: 8 * time.Second, keys: 400, mover: true},
	} {
		t.Run(fmt.Sprintf("m%d-I%d-mover%v", sc.limit>>20, sc.maxItem>>20, sc.mover), func(t *testing.T) { runSlabStress(t, sc) })
	}
}
