package protocol

import (
	"strings"
	"testing"
)

// binScript is a binary request stream; want is describePackets of
// memcached 1.6.18's reply (re-checked by TestBinaryAgainstMemcached unless
// own).
type binScript struct {
	name string
	in   string
	want string
	own  bool
}

// Opcodes with their quiet forms, every status code memcached sends, and
// the framing errors.
var binScripts = []binScript{
	{name: "noop", in: binReq(opNoop, "", "", "", 7, 0)},
	{name: "version", in: binReq(opVersion, "", "", "", 1, 0)},
	{name: "get miss", in: binReq(opGet, "a", "", "", 1, 0)},
	{name: "getk miss", in: binReq(opGetK, "a", "", "", 2, 0)},
	{name: "getq getkq miss", in: binReq(opGetQ, "a", "", "", 3, 0) + binReq(opGetKQ, "a", "", "", 4, 0) + binReq(opNoop, "", "", "", 5, 0)},
	{name: "set get", in: binReq(opSet, "a", setExt(5, 0), "hello", 1, 0) + binReq(opGet, "a", "", "", 2, 0) +
		binReq(opGetK, "a", "", "", 3, 0) + binReq(opGetQ, "a", "", "", 4, 0) + binReq(opGetKQ, "a", "", "", 5, 0)},
	{name: "setq", in: binReq(opSetQ, "a", setExt(0, 0), "x", 1, 0) + binReq(opGet, "a", "", "", 2, 0)},
	{name: "add", in: binReq(opAdd, "a", setExt(0, 0), "x", 1, 0) + binReq(opAdd, "a", setExt(0, 0), "y", 2, 0) +
		binReq(opAddQ, "a", setExt(0, 0), "y", 3, 0) + binReq(opAddQ, "b", setExt(0, 0), "y", 4, 0) + binReq(opGet, "b", "", "", 5, 0)},
	{name: "replace", in: binReq(opReplace, "a", setExt(0, 0), "x", 1, 0) + binReq(opReplaceQ, "a", setExt(0, 0), "x", 2, 0) +
		binReq(opSet, "a", setExt(0, 0), "x", 3, 0) + binReq(opReplace, "a", setExt(9, 0), "y", 4, 0) + binReq(opGet, "a", "", "", 5, 0)},
	{name: "set cas", in: binReq(opSet, "a", setExt(0, 0), "x", 1, 99999999) + binReq(opSet, "b", setExt(0, 0), "x", 2, 0) +
		binReq(opSet, "b", setExt(0, 0), "y", 3, 99999999) + binReq(opReplace, "b", setExt(0, 0), "y", 4, 99999999) +
		binReq(opAdd, "b", setExt(0, 0), "y", 5, 99999999)},
	{name: "add cas missing", in: binReq(opAdd, "a", setExt(0, 0), "x", 1, 99999999) + binReq(opAddQ, "a", setExt(0, 0), "x", 2, 99999999) +
		binReq(opGet, "a", "", "", 3, 0)},
	{name: "append prepend", in: binReq(opAppend, "a", "", "x", 1, 0) + binReq(opPrependQ, "a", "", "x", 2, 0) +
		binReq(opSet, "a", setExt(3, 0), "b", 3, 0) + binReq(opAppend, "a", "", "c", 4, 0) + binReq(opPrepend, "a", "", "a", 5, 0) +
		binReq(opAppendQ, "a", "", "d", 6, 0) + binReq(opPrependQ, "a", "", "_", 7, 0) + binReq(opAppend, "a", "", "e", 8, 99999999) +
		binReq(opGet, "a", "", "", 9, 0)},
	{name: "delete", in: binReq(opDelete, "a", "", "", 1, 0) + binReq(opDeleteQ, "a", "", "", 2, 0) +
		binReq(opSet, "a", setExt(0, 0), "x", 3, 0) + binReq(opDelete, "a", "", "", 4, 99999999) + binReq(opDelete, "a", "", "", 5, 0) +
		binReq(opSet, "a", setExt(0, 0), "x", 6, 0) + binReq(opDeleteQ, "a", "", "", 7, 0) + binReq(opGet, "a", "", "", 8, 0)},
	{name: "incr decr", in: binReq(opIncrement, "n", arithExt(1, 10, 0xffffffff), "", 1, 0) +
		binReq(opIncrement, "n", arithExt(1, 10, 0), "", 2, 0) + binReq(opIncrement, "n", arithExt(5, 10, 0), "", 3, 0) +
		binReq(opDecrement, "n", arithExt(100, 0, 0), "", 4, 0) + binReq(opIncrementQ, "n", arithExt(7, 0, 0), "", 5, 0) +
		binReq(opDecrementQ, "n", arithExt(2, 0, 0), "", 6, 0) + binReq(opGet, "n", "", "", 7, 0) +
		binReq(opDecrementQ, "m", arithExt(2, 0, 0xffffffff), "", 8, 0) + binReq(opIncrement, "n", arithExt(1, 0, 0), "", 9, 99999999)},
	{name: "incr non-numeric", in: binReq(opSet, "a", setExt(0, 0), "abc", 1, 0) + binReq(opIncrement, "a", arithExt(1, 0, 0), "", 2, 0) +
		binReq(opDecrementQ, "a", arithExt(1, 0, 0), "", 3, 0)},
	{name: "incr wraps", in: binReq(opIncrement, "n", arithExt(1, 18446744073709551615, 0), "", 1, 0) + binReq(opIncrement, "n", arithExt(2, 0, 0), "", 2, 0)},
	{name: "touch gat", in: binReq(opTouch, "a", be32(10), "", 1, 0) + binReq(opSet, "a", setExt(4, 0), "x", 2, 0) +
		binReq(opTouch, "a", be32(10), "", 3, 0) + binReq(opGAT, "a", be32(10), "", 4, 0) + binReq(opGATK, "a", be32(10), "", 5, 0) +
		binReq(opGATQ, "a", be32(10), "", 6, 0) + binReq(opGATKQ, "a", be32(10), "", 7, 0) + binReq(opGATQ, "b", be32(10), "", 8, 0) +
		binReq(opGATKQ, "b", be32(10), "", 9, 0) + binReq(opGAT, "b", be32(10), "", 10, 0) + binReq(opGATK, "b", be32(10), "", 11, 0) +
		binReq(opNoop, "", "", "", 12, 0)},
	{name: "gat expires", in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opGAT, "a", be32(0xffffffff-1), "", 2, 0) + binReq(opGet, "a", "", "", 3, 0)},
	{name: "flush", in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opFlush, "", "", "", 2, 0) + binReq(opGet, "a", "", "", 3, 0) +
		binReq(opSet, "a", setExt(0, 0), "x", 4, 0) + binReq(opFlushQ, "", "", "", 5, 0) + binReq(opGet, "a", "", "", 6, 0) +
		binReq(opFlush, "", be32(0), "", 7, 0)},
	{name: "quit", in: binReq(opNoop, "", "", "", 1, 0) + binReq(opQuit, "", "", "", 2, 0) + binReq(opNoop, "", "", "", 3, 0)},
	{name: "quitq", in: binReq(opQuitQ, "", "", "", 2, 0) + binReq(opNoop, "", "", "", 3, 0)},
	{name: "stat reset", in: binReq(opStat, "reset", "", "", 1, 0)},
	{name: "stat detail", in: binReq(opStat, "detail dump", "", "", 1, 0) + binReq(opStat, "detail on", "", "", 2, 0) +
		binReq(opStat, "detail off", "", "", 3, 0) + binReq(opStat, "detail", "", "", 4, 0) + binReq(opStat, "detail x", "", "", 5, 0) +
		binReq(opStat, "resetxyz", "", "", 6, 0) + binReq(opStat, "items ", "", "", 7, 0)},
	{name: "stat sizes", in: binReq(opStat, "sizes", "", "", 1, 0)},
	{name: "stat unknown", in: binReq(opStat, "nope", "", "", 1, 0) + binReq(opStat, "conns", "", "", 2, 0) + binReq(opNoop, "", "", "", 3, 0)},
	{name: "sasl disabled", in: binReq(opSASLList, "", "", "", 1, 0) + binReq(opSASLAuth, "PLAIN", "", "\x00u\x00p", 2, 0) +
		binReq(opSASLStep, "PLAIN", "", "\x00u\x00p", 3, 0) + binReq(opNoop, "", "", "", 4, 0)},
	{name: "verbosity unknown", in: binReq(0x1b, "", be32(1), "", 1, 0) + binReq(opNoop, "", "", "", 2, 0)},
	{name: "unknown opcode", in: binReq(0x50, "", "", "", 1, 0) + binReq(opNoop, "", "", "", 2, 0)},
	{name: "unknown opcode swallows body", in: binReq(0x50, "", "", "abcd", 1, 0) + binReq(opNoop, "", "", "", 2, 0)},
	{name: "unknown opcode swallows past key", in: binReq(0x50, "k", "", "", 1, 0) + "x" + binReq(opNoop, "", "", "", 2, 0)},
	{name: "get with extras", in: binReq(opGet, "a", "e", "", 1, 0) + binReq(opNoop, "", "", "", 2, 0)},
	{name: "get no key", in: binReq(opGet, "", "", "", 1, 0)},
	{name: "get key 251", in: binReq(opGet, k251, "", "", 1, 0)},
	{name: "set key 250", in: binReq(opSet, k250, setExt(0, 0), "v", 1, 0) + binReq(opGetK, k250, "", "", 2, 0)},
	{name: "set bad extras", in: binReq(opSet, "a", be32(0), "x", 1, 0) + binReq(opNoop, "", "", "", 2, 0)},
	{name: "set no key", in: binReq(opSet, "", setExt(0, 0), "x", 1, 0)},
	{name: "noop with body", in: binReq(opNoop, "", "", "x", 1, 0)},
	{name: "version with key", in: binReq(opVersion, "k", "", "", 1, 0)},
	{name: "delete with value", in: binReq(opDelete, "a", "", "x", 1, 0)},
	{name: "incr bad extras", in: binReq(opIncrement, "a", be64(1), "", 1, 0)},
	{name: "flush with key", in: binReq(opFlush, "k", "", "", 1, 0)},
	{name: "touch no extras", in: binReq(opTouch, "a", "", "", 1, 0)},
	{name: "stat with extras", in: binReq(opStat, "", "e", "", 1, 0)},
	{name: "quit with body", in: binReq(opQuit, "", "", "x", 1, 0)},
	{name: "keylen over bodylen", in: rawHeader(opGet, 5, 0, 2, 1) + "abcde"},
	{name: "key plus extras over bodylen", in: rawHeader(opSet, 2, 8, 9, 1) + setExt(0, 0) + "ab"},
	{name: "bad magic after binary", in: binReq(opNoop, "", "", "", 1, 0) + "get a\r\n" + strings.Repeat("x", 20)},
	{name: "too large swallowed", in: binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opSet, "a", setExt(0, 0), strings.Repeat("v", 2000000), 2, 0) +
		binReq(opGet, "a", "", "", 3, 0) + binReq(opAppend, "b", "", strings.Repeat("v", 2000000), 4, 0) + binReq(opNoop, "", "", "", 5, 0)},
	{name: "append too large", in: binReq(opSet, "a", setExt(0, 0), strings.Repeat("v", 600000), 1, 0) +
		binReq(opAppend, "a", "", strings.Repeat("w", 600000), 2, 0) + binReq(opGet, "b", "", "", 3, 0)},
	{name: "opaque and quiet batch", in: binReq(opSetQ, "a", setExt(1, 0), "1", 0xdeadbeef, 0) + binReq(opSetQ, "b", setExt(2, 0), "2", 0xcafe, 0) +
		binReq(opGetKQ, "a", "", "", 11, 0) + binReq(opGetKQ, "zz", "", "", 12, 0) + binReq(opGetKQ, "b", "", "", 13, 0) + binReq(opNoop, "", "", "", 14, 0)},
	{name: "text after binary start", in: binReq(opNoop, "", "", "", 1, 0) + "\x80"},
}

// fillBinaryWants computes the wants from a recorded reference; the table
// holds them as literal text in binary_wants_test.go.
func binWant(name string) string { return binWants[name] }

func runBinary(t *testing.T, in string) result {
	t.Helper()
	return drive(t, NewSession(newStillEnv(t)), []byte(in))
}

func TestBinaryScripts(t *testing.T) {
	for _, sc := range binScripts {
		t.Run(sc.name, func(t *testing.T) {
			want, ok := binWants[sc.name]
			if !ok {
				t.Fatalf("no recorded reply")
			}
			got := runBinary(t, sc.in)
			if g := describePackets(got.out, got.closed); g != want {
				t.Errorf("got:\n%swant:\n%s", g, want)
			}
		})
	}
}

// TestBinaryScriptsSplit feeds each stream split at every byte (at random
// points for large ones) and one byte at a time.
func TestBinaryScriptsSplit(t *testing.T) {
	t.Parallel()
	for _, sc := range binScripts {
		t.Run(sc.name, func(t *testing.T) {
			want := binWants[sc.name]
			in := []byte(sc.in)
			step := 1
			if len(in) > 4096 {
				step = len(in)/17 + 1
			}
			for i := 1; i < len(in); i += step {
				got := driveFresh(t, newStillEnv, in[:i], in[i:])
				if g := describePackets(got.out, got.closed); g != want {
					t.Fatalf("split at %d:\n%swant:\n%s", i, g, want)
				}
			}
			if len(in) <= 4096 {
				chunks := make([][]byte, len(in))
				for i := range in {
					chunks[i] = in[i : i+1]
				}
				got := driveFresh(t, newStillEnv, chunks...)
				if g := describePackets(got.out, got.closed); g != want {
					t.Fatalf("byte by byte:\n%swant:\n%s", g, want)
				}
			}
		})
	}
}

func TestBinaryAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, sc := range binScripts {
		if sc.own {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			// Wait for as many bytes as gocached sends, so that a pause in a
			// long reply is not taken for its end.
			own := runBinary(t, sc.in)
			ref := exchangeWant(t, addr, sc.in, max(1, len(own.out)), own.closed)
			if g := describePackets(ref.out, ref.closed); g != binWants[sc.name] {
				t.Errorf("memcached:\n%srecorded:\n%s", g, binWants[sc.name])
			}
		})
	}
}

// statNames lists the keys of a binary STAT reply in order.
func statNames(desc string) []string {
	var names []string
	for _, l := range strings.Split(desc, "\n") {
		if i := strings.Index(l, "key=\""); i >= 0 && strings.Contains(l, "op=10 st=00") {
			name := l[i+5:]
			names = append(names, name[:strings.Index(name, "\"")])
		}
	}
	return names
}

// TestBinaryStatsAgainstMemcached: a binary STAT lists the same names in
// the same order as memcached's, for the general and settings groups.
func TestBinaryStatsAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t) // the names are 1.6.45's
	for _, group := range []string{"", "settings"} {
		in := binReq(opStat, group, "", "", 9, 0)
		ref := exchangeAll(t, addr, in)
		got := runBinary(t, in)
		r := statNames(describePackets(ref.out, ref.closed))
		g := statNames(describePackets(got.out, got.closed))
		if len(r) < 10 {
			t.Fatalf("stats %q: memcached sent %d stats", group, len(r))
		}
		// gocached adds its own fields at the end of a group; memcached's
		// must all be there, in order.
		j := 0
		for _, name := range g {
			if j < len(r) && name == r[j] {
				j++
			}
		}
		if j != len(r) {
			t.Errorf("stats %q: memcached's %q missing or out of order\nmemcached: %v\ngocached:  %v", group, r[j], r, g)
		}
	}
}

// binStatStreams run after a reset; the stats counters must agree with
// memcached's, so that the binary protocol counts like the text one.
var binStatStreams = []string{
	binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opGet, "a", "", "", 2, 0) + binReq(opGet, "b", "", "", 3, 0) +
		binReq(opGetKQ, "b", "", "", 4, 0) + binReq(opGetQ, "a", "", "", 5, 0),
	binReq(opSet, "a", setExt(0, 0), "x", 1, 0) + binReq(opTouch, "a", be32(10), "", 2, 0) + binReq(opTouch, "b", be32(10), "", 3, 0) +
		binReq(opGAT, "a", be32(10), "", 4, 0) + binReq(opGATQ, "b", be32(10), "", 5, 0),
	binReq(opSet, "a", setExt(0, 0), "1", 1, 0) + binReq(opIncrement, "a", arithExt(1, 0, 0), "", 2, 0) +
		binReq(opDecrement, "a", arithExt(1, 0, 0), "", 3, 0) + binReq(opIncrement, "b", arithExt(1, 0, 0xffffffff), "", 4, 0) +
		binReq(opDecrement, "b", arithExt(1, 0, 0xffffffff), "", 5, 0) + binReq(opIncrement, "c", arithExt(1, 0, 0), "", 6, 0),
	binReq(opSet, "a", setExt(0, 0), "1", 1, 0) + binReq(opDelete, "a", "", "", 2, 0) + binReq(opDelete, "a", "", "", 3, 0) +
		binReq(opSet, "a", setExt(0, 0), "1", 4, 0) + binReq(opDelete, "a", "", "", 5, 99999999),
	binReq(opSet, "a", setExt(0, 0), "1", 1, 0) + binReq(opSet, "a", setExt(0, 0), "1", 2, 99999999) + binReq(opSet, "z", setExt(0, 0), "1", 3, 99999999) +
		binReq(opAdd, "a", setExt(0, 0), "1", 4, 0) + binReq(opAppend, "a", "", "2", 5, 0) + binReq(opNoop, "", "", "", 6, 0),
}

func TestBinaryCountersAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	statsReq := binReq(opStat, "", "", "", 0, 0)
	for i, in := range binStatStreams {
		t.Run(strings.Repeat("#", i+1), func(t *testing.T) {
			flushMemcached(t, addr)
			exchange(t, addr, "stats reset\r\n", len("RESET\r\n"))
			ref := exchangeAll(t, addr, in+statsReq)
			got := runBinary(t, in+statsReq)
			r, g := binCounters(describePackets(ref.out, ref.closed)), binCounters(describePackets(got.out, got.closed))
			if r == "" || r != g {
				t.Errorf("memcached:\n%s\ngocached:\n%s", r, g)
			}
		})
	}
}

// binCounters picks the counterStats packets out of a described STAT reply.
func binCounters(desc string) string {
	var b strings.Builder
	for _, name := range counterStats {
		if name == "cmd_flush" {
			continue
		}
		for _, l := range strings.Split(desc, "\n") {
			if strings.Contains(l, "op=10 st=00") && strings.Contains(l, "key=\""+name+"\"") {
				b.WriteString(l[strings.Index(l, "key="):strings.Index(l, " opq=")] + "\n")
			}
		}
	}
	return b.String()
}
