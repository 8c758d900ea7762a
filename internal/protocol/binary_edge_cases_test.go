package protocol

import (
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/store"
)

// Binary-protocol replies the random binary differential
// (integration/binrand_test.go) found gocached giving differently from
// memcached 1.6.18, each with memcached's reply as describePackets renders
// it; TestBinaryEdgeCasesAgainstMemcached checks the wants against a memcached
// started with the case's flags.

type binEdgeCase struct {
	name  string
	flags []string   // memcached's command line
	set   func(*Env) // the same for gocached
	in    string
	want  string
}

// pastStart is an absolute time before any memcached process started.
const pastStart = 1000000000

var binEdgeCases = []binEdgeCase{
	{name: "flush at an absolute time before the start flushes nothing",
		set: func(e *Env) { e.StartUnix = 1_700_000_000 },
		in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opFlush, "", be32(pastStart), "", 2, 0) +
			binReq(opFlushQ, "", be32(2592001), "", 3, 0) + binReq(opGet, "a", "", "", 4, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=C\n" +
			"81 00 op=08 st=00 ext= key=\"\" val=\"\" opq=00000002 cas=0\n" +
			"81 00 op=00 st=00 ext=00000000 key=\"\" val=\"x\" opq=00000004 cas=C\n"},
	{name: "flush refused under -F", flags: []string{"-F"},
		set: func(e *Env) { e.Settings.FlushDisabled = true },
		in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opFlush, "", "", "", 2, 0) +
			binReq(opFlushQ, "", be32(0), "", 3, 0) + binReq(opGet, "a", "", "", 4, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=C\n" +
			"81 00 op=08 st=20 ext= key=\"\" val=\"Auth failure.\" opq=00000002 cas=0\n" +
			"81 00 op=18 st=20 ext= key=\"\" val=\"Auth failure.\" opq=00000003 cas=0\n" +
			"81 00 op=00 st=00 ext=00000000 key=\"\" val=\"x\" opq=00000004 cas=C\n"},
	{name: "nonzero flags take 4 bytes of the largest item",
		in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opSetQ, "a", setExt(7, 0), strings.Repeat("v", 1048513), 2, 0) +
			binReq(opGet, "a", "", "", 3, 0) + binReq(opAdd, "a", setExt(1, 0), strings.Repeat("v", 1048512), 4, 0) +
			binReq(opReplace, "a", setExt(0, 0), strings.Repeat("v", 1048516), 5, 0) + binReq(opGet, "a", "", "", 6, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=C\n" +
			"81 00 op=11 st=03 ext= key=\"\" val=\"Too large.\" opq=00000002 cas=0\n" +
			"81 00 op=00 st=01 ext= key=\"\" val=\"Not found\" opq=00000003 cas=0\n" +
			"81 00 op=02 st=00 ext= key=\"\" val=\"\" opq=00000004 cas=C\n" +
			"81 00 op=03 st=00 ext= key=\"\" val=\"\" opq=00000005 cas=C\n" +
			"81 00 op=00 st=00 ext=00000000 key=\"\" val=\"" + strings.Repeat("v", 1048516) + "\" opq=00000006 cas=C\n"},
	{name: "-C ignores a storage request's CAS", flags: []string{"-C"},
		set: func(e *Env) { e.Settings.CASEnabled, e.Store = false, noCASStore(e) },
		in: binReq(opSet, "a", setExt(0, 0), "x", 1, 99999999) + binReq(opAddQ, "b", setExt(0, 0), "y", 2, 99999999) +
			binReq(opReplace, "a", setExt(3, 0), "z", 3, 99999999) + binReq(opAppend, "a", "", "1", 4, 99999999) +
			binReq(opPrepend, "b", "", "0", 5, 99999999) + binReq(opDelete, "a", "", "", 6, 99999999) +
			binReq(opIncrement, "b", arithExt(1, 0, 0), "", 7, 99999999) + binReq(opGetK, "a", "", "", 8, 0) +
			binReq(opGetK, "b", "", "", 9, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\n" +
			"81 00 op=03 st=00 ext= key=\"\" val=\"\" opq=00000003 cas=0\n" +
			"81 00 op=0e st=00 ext= key=\"\" val=\"\" opq=00000004 cas=0\n" +
			"81 00 op=0f st=00 ext= key=\"\" val=\"\" opq=00000005 cas=0\n" +
			"81 00 op=04 st=02 ext= key=\"\" val=\"Data exists for key.\" opq=00000006 cas=0\n" +
			"81 00 op=05 st=02 ext= key=\"\" val=\"Data exists for key.\" opq=00000007 cas=0\n" +
			"81 00 op=0c st=00 ext=00000003 key=\"a\" val=\"z1\" opq=00000008 cas=0\n" +
			"81 00 op=0c st=00 ext=00000000 key=\"b\" val=\"0y\" opq=00000009 cas=0\n"},
	{name: "stats detail counts a too-large set or append",
		in: binReq(opStat, "detail on", "", "", 1, 0) + binReq(opSet, "p:a", setExt(0, 0), strings.Repeat("v", 1048576), 2, 0) +
			binReq(opAppendQ, "p:b", "", strings.Repeat("v", 1048576), 3, 0) + binReq(opStat, "detail dump", "", "", 4, 0),
		want: "81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\n" +
			"81 00 op=01 st=03 ext= key=\"\" val=\"Too large.\" opq=00000002 cas=0\n" +
			"81 00 op=19 st=03 ext= key=\"\" val=\"Too large.\" opq=00000003 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"detailed\" val=\"PREFIX p get 0 hit 0 set 2 del 0\\r\\nEND\\r\\n\" opq=00000004 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000004 cas=0\n"},
	{name: "a key that overflows the read buffer closes without a reply",
		in:   binReq(opNoop, "", "", "", 1, 0) + binReq(opGet, strings.Repeat("k", 16361), "", "", 2, 0),
		want: "81 00 op=0a st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\nclosed\n"},
	{name: "a key that just fits the read buffer is refused as too long",
		in: binReq(opNoop, "", "", "", 1, 0) + binReq(0x50, strings.Repeat("k", 16360), "", "", 2, 0),
		want: "81 00 op=0a st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\n" +
			"81 00 op=50 st=04 ext= key=\"\" val=\"Invalid arguments\" opq=00000002 cas=0\nclosed\n"},
	{name: "stats detail finds no prefix past a NUL",
		in: binReq(opStat, "detail on", "", "", 1, 0) + binReq(opGet, "n\x00:x", "", "", 2, 0) +
			binReq(opSet, "m:\x00", setExt(0, 0), "v", 3, 0) + binReq(opStat, "detail dump", "", "", 4, 0),
		want: "81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\n" +
			"81 00 op=00 st=01 ext= key=\"\" val=\"Not found\" opq=00000002 cas=0\n" +
			"81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000003 cas=C\n" +
			"81 00 op=10 st=00 ext= key=\"detailed\" val=\"PREFIX m get 0 hit 0 set 1 del 0\\r\\nEND\\r\\n\" opq=00000004 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000004 cas=0\n"},
	{name: "stats detail dump lists prefixes in memcached's table order",
		in: binReq(opStat, "detail on", "", "", 1, 0) + binReq(opGetQ, "a:1", "", "", 2, 0) + binReq(opGetQ, "b:1", "", "", 3, 0) +
			binReq(opGetQ, "k:1", "", "", 4, 0) + binReq(opGetQ, "x:1", "", "", 5, 0) + binReq(opGetQ, "zzzz:1", "", "", 6, 0) +
			binReq(opGetQ, "abcdefg:1", "", "", 7, 0) + binReq(opGetQ, "a b:1", "", "", 8, 0) + binReq(opGetQ, ":1", "", "", 9, 0) +
			binReq(opGetQ, "p4:1", "", "", 9, 0) + binReq(opGetQ, "p15:1", "", "", 9, 0) + // one bucket
			binReq(opStat, "detail dump", "", "", 10, 0),
		want: "81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"detailed\" val=\"PREFIX  get 1 hit 0 set 0 del 0\\r\\nPREFIX b get 1 hit 0 set 0 del 0\\r\\n" +
			"PREFIX abcdefg get 1 hit 0 set 0 del 0\\r\\nPREFIX x get 1 hit 0 set 0 del 0\\r\\nPREFIX a b get 1 hit 0 set 0 del 0\\r\\n" +
			"PREFIX p15 get 1 hit 0 set 0 del 0\\r\\nPREFIX p4 get 1 hit 0 set 0 del 0\\r\\nPREFIX zzzz get 1 hit 0 set 0 del 0\\r\\n" +
			"PREFIX a get 1 hit 0 set 0 del 0\\r\\nPREFIX k get 1 hit 0 set 0 del 0\\r\\nEND\\r\\n\" opq=0000000a cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=0000000a cas=0\n"},
	{name: "incr refuses an item over slab_chunk_max before comparing its CAS",
		set: func(e *Env) { e.Store = chunkStore(e, 512<<10) },
		in: binReq(opSet, "a", setExt(0, 0), "12"+strings.Repeat(" ", 600000), 1, 0) + binReq(opIncrement, "a", arithExt(1, 0, 0), "", 2, 0) +
			binReq(opDecrement, "a", arithExt(1, 0, 0), "", 3, 99999999) +
			binReq(opSet, "b", setExt(0, 0), "12"+strings.Repeat(" ", 524226), 4, 0) + binReq(opDecrement, "b", arithExt(1, 0, 0), "", 5, 0) +
			binReq(opSet, "c", setExt(1, 0), "12"+strings.Repeat(" ", 524223), 6, 0) + binReq(opDecrement, "c", arithExt(1, 0, 0), "", 7, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=C\n" +
			"81 00 op=05 st=06 ext= key=\"\" val=\"Non-numeric server-side value for incr or decr\" opq=00000002 cas=0\n" +
			"81 00 op=06 st=06 ext= key=\"\" val=\"Non-numeric server-side value for incr or decr\" opq=00000003 cas=0\n" +
			"81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000004 cas=C\n" +
			"81 00 op=06 st=00 ext= key=\"\" val=\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\v\" opq=00000005 cas=C\n" +
			"81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000006 cas=C\n" +
			"81 00 op=06 st=06 ext= key=\"\" val=\"Non-numeric server-side value for incr or decr\" opq=00000007 cas=0\n"},
	{name: "no_chunked_items: incr takes a number of 600000 bytes", flags: []string{"-o", "no_chunked_items"},
		set: func(e *Env) { e.Store = chunkStore(e, 1<<20) },
		in:  binReq(opSet, "a", setExt(0, 0), "12"+strings.Repeat(" ", 600000), 1, 0) + binReq(opIncrement, "a", arithExt(1, 0, 0), "", 2, 0),
		want: "81 00 op=01 st=00 ext= key=\"\" val=\"\" opq=00000001 cas=C\n" +
			"81 00 op=05 st=00 ext= key=\"\" val=\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\r\" opq=00000002 cas=C\n"},
}

func TestBinaryEdgeCases(t *testing.T) {
	for _, c := range binEdgeCases {
		t.Run(c.name, func(t *testing.T) {
			got := runBinEdgeCase(t, c)
			if g := describePackets(got.out, got.closed); g != c.want {
				t.Errorf("got:\n%swant:\n%s", g, c.want)
			}
		})
	}
}

func TestBinaryEdgeCasesAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	for _, c := range binEdgeCases {
		t.Run(c.name, func(t *testing.T) {
			addr := startMemcachedWith(t, nil, c.flags...)
			// Wait for as many bytes as gocached sends.
			own := runBinEdgeCase(t, c)
			ref := exchangeWant(t, addr, c.in, max(1, len(own.out)), own.closed)
			if g := describePackets(ref.out, ref.closed); g != c.want {
				t.Errorf("memcached:\n%swant:\n%s", g, c.want)
			}
		})
	}
}

func runBinEdgeCase(t *testing.T, c binEdgeCase) result {
	t.Helper()
	env := newStillEnv(t)
	orig := env.Store
	if c.set != nil {
		c.set(env)
	}
	if env.Store != orig {
		t.Cleanup(env.Store.Close)
	}
	return drive(t, NewSession(env), []byte(c.in))
}

// noCASStore is a store like e's started with -C.
func noCASStore(e *Env) *store.Store {
	st, err := store.New(store.Config{MemoryLimit: 4 << 20, MaxItemSize: 1 << 20, DisableCAS: true, Now: e.Store.Now})
	if err != nil {
		panic(err)
	}
	return st
}

// chunkStore is a store like e's whose items over slabChunkMax bytes are
// chunked in memcached (memcached's -o slab_chunk_max, 512 KB by default).
func chunkStore(e *Env, slabChunkMax int) *store.Store {
	st, err := store.New(store.Config{MemoryLimit: 4 << 20, MaxItemSize: 1 << 20, SlabChunkMax: slabChunkMax, Now: e.Store.Now})
	if err != nil {
		panic(err)
	}
	return st
}
