package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/store"
)

// A get that meets a flash item whose read finds no memory (its class has
// none and -M forbids evicting) answers as memcached 1.6.45 does, checked
// against the real server: text gets drop the values gathered and answer
// the error with memcached's extra blank line; mg repeats its line and
// answers EN (nothing under q); binary answers a plain miss. Each counts
// get_oom_extstore; a get that reads no value (mg without v) makes no
// read; freeing memory lets the read through. The key's own counters are
// memcached's too: a text get or gat counts nothing for it (its counters
// come after the read is set up), mg and binary a miss. A Session that
// reads in place (a datagram's, or one of an engine that does not resume
// Sessions) answers and counts alike.
func TestFlashGetOutOfMemory(t *testing.T) {
	// -M, and no value small enough for the store's own flushes to flash
	// (which would free memory behind the test's back): only MoveToFlash
	// puts b there.
	fe := newFlashEnvWith(t, func(c *store.Config) { c.DisableEvictions, c.Flash.ItemSize = true, 1<<20 })
	st := fe.env.Store
	st.Set(store.ModeSet, []byte("a"), 0, 0, []byte("ram"), 0)
	fe.storeOnFlash(t, "b")
	vb := flashVal("b")
	// Fillers of b's size to the byte (key and value, flags alike), so
	// they take b's class, and freeing one gives b's read its room.
	filled := 0
	for ; filled < 10000; filled++ {
		k := fmt.Appendf(nil, "fill%d", filled)
		if st.Set(store.ModeSet, k, 5, 0, []byte(vb[:len(vb)+1-len(k)]), 0) != store.Stored {
			break
		}
	}
	if filled == 0 || filled == 10000 {
		t.Fatalf("memory filled after %d items", filled)
	}
	oom := "SERVER_ERROR out of memory writing get response\r\n\r\n"
	head := fmt.Sprintf("VA %d Oxy kb\r\n", len(vb))
	cases := []struct {
		name, in, want string
		ooms           uint64
		counts         lookupCounts // what the command counted, as memcached 1.6.45
	}{
		{"get", "get b\r\n", oom, 1, lookupCounts{}},
		{"values before it dropped", "get a b a\r\n", oom, 1, lookupCounts{cmdGet: 1, getHits: 1}},
		{"gets", "gets b\r\n", oom, 1, lookupCounts{}},
		{"gat", "gat 0 b\r\n", oom, 1, lookupCounts{}},
		{"before a bad key", "get b " + strings.Repeat("x", 251) + "\r\n", oom, 1, lookupCounts{}},
		{"mg", "mg b v Oxy k\r\n", head + head + "EN Oxy kb\r\n", 1, lookupCounts{cmdGet: 1, getMisses: 1}},
		{"mg q", "mg b v q\r\nmn\r\n", "MN\r\n", 1, lookupCounts{cmdGet: 1, getMisses: 1}},
		{"mg T", "mg b v T30\r\n", strings.Repeat(fmt.Sprintf("VA %d\r\n", len(vb)), 2) + "EN\r\n", 1, lookupCounts{cmdTouch: 1, touchMisses: 1}},
		{"mg without a value", "mg b s\r\n", fmt.Sprintf("HD s%d\r\n", len(vb)), 0, lookupCounts{cmdGet: 1, getHits: 1}},
		{"binary GetK", binReq(opGetK, "b", "", "", 7, 0),
			string(appendBinHeader(nil, opGetK, statusKeyNotFound, 0, 1, 1, [4]byte{0, 0, 0, 7}, 0)) + "b", 1,
			lookupCounts{cmdGet: 1, getMisses: 1}},
		{"binary GetQ", binReq(opGetQ, "b", "", "", 8, 0) + binReq(opNoop, "", "", "", 9, 0),
			string(appendBinHeader(nil, opNoop, statusOK, 0, 0, 0, [4]byte{0, 0, 0, 9}, 0)), 1,
			lookupCounts{cmdGet: 1, getMisses: 1}},
	}
	modes := []struct {
		name    string
		resumed bool
	}{{"resumed", true}, {"in place", false}}
	for _, m := range modes {
		fe.env.ResumesPending = m.resumed
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				before, counted := st.FlashStats(), countsOf(st)
				s := NewSession(fe.env)
				if got := fe.flashRun(t, s, []byte(c.in), nil); got != c.want {
					t.Fatalf("replies %q, want %q", abbrev(got), abbrev(c.want))
				}
				after := st.FlashStats()
				if after.GetOOMExtstore-before.GetOOMExtstore != c.ooms || after.GetExtstore != before.GetExtstore {
					t.Fatalf("flash stats %+v after %+v: want %d oom, no read", after, before, c.ooms)
				}
				if got := countsOf(st).minus(counted); got != c.counts {
					t.Fatalf("counted %+v, want %+v", got, c.counts)
				}
			})
		}
	}
	fe.env.ResumesPending = true
	s := NewSession(fe.env)
	if st := drive(t, s, []byte("stats\r\n")).out; !strings.Contains(st, "STAT get_oom_extstore 20\r\n") {
		t.Fatalf("stats lack get_oom_extstore 20 (10 a mode): %q", abbrev(st))
	}
	st.Delete([]byte("fill0"))
	if got, want := fe.flashRun(t, s, []byte("get b\r\n"), nil), fmt.Sprintf("VALUE b 5 %d\r\n%s\r\nEND\r\n", len(vb), vb); got != want {
		t.Fatalf("with room freed: %q, want %q", abbrev(got), abbrev(want))
	}
}

// lookupCounts are the store's counters a retrieval moves.
type lookupCounts struct {
	cmdGet, getHits, getMisses, cmdTouch, touchHits, touchMisses uint64
}

func countsOf(st *store.Store) lookupCounts {
	x := st.Stats()
	return lookupCounts{x.CmdGet, x.GetHits, x.GetMisses, x.CmdTouch, x.TouchHits, x.TouchMisses}
}

func (a lookupCounts) minus(b lookupCounts) lookupCounts {
	return lookupCounts{a.cmdGet - b.cmdGet, a.getHits - b.getHits, a.getMisses - b.getMisses,
		a.cmdTouch - b.cmdTouch, a.touchHits - b.touchHits, a.touchMisses - b.touchMisses}
}
