package store

import "testing"

func TestMetaGetVivifyAndTokens(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clk.Now})
	var created, sent bool
	found := s.MetaGet([]byte("k"), true, NewCAS{}, func(it Item, c bool) bool {
		created, sent = c, it.TokenSent()
		it.SetExptime(30)
		it.SetTokenSent()
		return false
	})
	if !found || !created || sent {
		t.Fatalf("vivify: found %v created %v sent %v", found, created, sent)
	}
	s.MetaGet([]byte("k"), true, NewCAS{}, func(it Item, c bool) bool {
		if c || !it.TokenSent() || it.TTL() != 30 || len(it.Value()) != 0 {
			t.Errorf("second get: created %v sent %v ttl %d value %q", c, it.TokenSent(), it.TTL(), it.Value())
		}
		return true
	})
	if s.MetaGet([]byte("nope"), false, NewCAS{}, func(Item, bool) bool { t.Error("called on miss"); return false }) {
		t.Fatal("miss reported as hit")
	}
	st := s.Stats()
	if st.CmdGet != 2 || st.GetHits != 1 || st.GetMisses != 1 || st.CmdTouch != 1 || st.TouchHits != 1 {
		t.Fatalf("counters: %+v", st)
	}
}

func TestSetItemCASAndInvalidate(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	res, cas := s.SetItem(SetRequest{Mode: ModeSet, Key: []byte("k"), Value: []byte("a")})
	if res != Stored || cas == 0 {
		t.Fatalf("set: %v %d", res, cas)
	}
	if res, _ := s.SetItem(SetRequest{Mode: ModeCAS, Key: []byte("k"), Value: []byte("b"), CAS: cas + 1}); res != Exists {
		t.Fatalf("cas mismatch: %v", res)
	}
	// A stale CAS with Invalidate stores, marked stale.
	res, cas2 := s.SetItem(SetRequest{Mode: ModeCAS, Key: []byte("k"), Value: []byte("c"), CAS: cas - 0, Invalidate: true})
	if res != Stored || cas2 <= cas {
		t.Fatalf("cas match: %v %d", res, cas2)
	}
	if res, _ := s.SetItem(SetRequest{Mode: ModeCAS, Key: []byte("k"), Value: []byte("d"), CAS: cas, Invalidate: true}); res != Stored {
		t.Fatalf("older cas with invalidate: %v", res)
	}
	s.View([]byte("k"), func(it Item) {
		if !it.Stale() || string(it.Value()) != "d" {
			t.Errorf("stale %v value %q", it.Stale(), it.Value())
		}
	})
	if res, _ := s.SetItem(SetRequest{Mode: ModeAppend, Key: []byte("k"), Value: []byte("x"), CAS: 1}); res != Exists {
		t.Fatalf("append with wrong cas: %v", res)
	}
	if res, _ := s.SetItem(SetRequest{Mode: ModeSet, Key: []byte("b"), Value: []byte("x"), KeyBinary: true}); res != Stored {
		t.Fatal(res)
	}
	s.View([]byte("b"), func(it Item) {
		if !it.KeyBinary() {
			t.Error("key binary bit lost")
		}
	})
}

func TestDeleteItem(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	_, cas := s.SetItem(SetRequest{Mode: ModeSet, Key: []byte("k"), Value: []byte("a")})
	if r := s.DeleteItem([]byte("k"), DeleteRequest{HasCAS: true, CAS: cas + 1, MissOnMismatch: true}); r != Exists {
		t.Fatalf("mismatch: %v", r)
	}
	if r := s.DeleteItem([]byte("k"), DeleteRequest{Invalidate: true, SetExptime: true, Exptime: 30}); r != Stored {
		t.Fatalf("invalidate: %v", r)
	}
	s.View([]byte("k"), func(it Item) {
		if !it.Stale() || it.TTL() != 30 || it.CAS() == cas {
			t.Errorf("after invalidate: stale %v ttl %d cas %d (was %d)", it.Stale(), it.TTL(), it.CAS(), cas)
		}
	})
	if r := s.DeleteItem([]byte("k"), DeleteRequest{}); r != Stored {
		t.Fatalf("delete: %v", r)
	}
	if r := s.DeleteItem([]byte("k"), DeleteRequest{}); r != NotFound {
		t.Fatalf("second delete: %v", r)
	}
	st := s.Stats()
	if st.DeleteHits != 1 || st.DeleteMisses != 2 {
		t.Fatalf("delete counters: hits %d misses %d", st.DeleteHits, st.DeleteMisses)
	}
}

func TestArithVivifyAndCAS(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	var got uint64
	var made bool
	res := s.Arith([]byte("n"), ArithRequest{Delta: 1, Vivify: true, Initial: 41}, func(it Item, v uint64, c bool) { got, made = v, c })
	if res != Stored || got != 41 || !made {
		t.Fatalf("vivify: %v %d %v", res, got, made)
	}
	var cas uint64
	res = s.Arith([]byte("n"), ArithRequest{Delta: 1}, func(it Item, v uint64, c bool) { got, made, cas = v, c, it.CAS() })
	if res != Stored || got != 42 || made {
		t.Fatalf("incr: %v %d %v", res, got, made)
	}
	if res := s.Arith([]byte("n"), ArithRequest{Delta: 1, CAS: cas + 1}, nil); res != Exists {
		t.Fatalf("cas mismatch: %v", res)
	}
	if res := s.Arith([]byte("none"), ArithRequest{Delta: 1, Decr: true}, nil); res != NotFound {
		t.Fatalf("miss: %v", res)
	}
	if st := s.Stats(); st.IncrHits != 1 || st.DecrMisses != 1 || st.IncrMisses != 0 {
		t.Fatalf("counters: %+v", st)
	}
}

func TestDiscardCountsNothing(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	s.Set(ModeSet, []byte("k"), 0, 0, []byte("v"), 0)
	s.Discard([]byte("k"))
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("still there")
	}
	if st := s.Stats(); st.DeleteHits != 0 || st.DeleteMisses != 0 {
		t.Fatalf("discard counted: %+v", st)
	}
}

func TestItemAccessors(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clk.Now})
	s.Set(ModeSet, []byte("key"), 5, 100, []byte("0123456789"), 0)
	clk.advance(7)
	s.View([]byte("key"), func(it Item) {
		// memcached: 48-byte header, key+NUL, 4 bytes of flags, value+CRLF, CAS.
		if it.Size() != 48+4+4+12+8 || it.Class() != 1 {
			t.Errorf("size %d class %d", it.Size(), it.Class())
		}
		if it.IdleSeconds() != 7 || it.TTL() != 93 || it.Fetched() {
			t.Errorf("idle %d ttl %d fetched %v", it.IdleSeconds(), it.TTL(), it.Fetched())
		}
		it.Bump()
	})
	s.View([]byte("key"), func(it Item) {
		if it.IdleSeconds() != 0 || !it.Fetched() {
			t.Errorf("after bump: idle %d fetched %v", it.IdleSeconds(), it.Fetched())
		}
		it.SetExptime(0)
		if it.TTL() != -1 {
			t.Errorf("ttl after SetExptime(0): %d", it.TTL())
		}
	})
	nocas := newTestStore(t, Config{MemoryLimit: 4 << 20, DisableCAS: true})
	nocas.Set(ModeSet, []byte("k"), 0, 0, []byte("v"), 0)
	nocas.View([]byte("k"), func(it Item) {
		if it.CAS() != 0 || it.Size() != 48+2+3 {
			t.Errorf("-C: cas %d size %d", it.CAS(), it.Size())
		}
	})
}
