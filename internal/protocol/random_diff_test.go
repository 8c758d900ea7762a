package protocol

import (
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Random differential tests: seeded streams of meta, text and binary
// commands over a few keys, run against gocached and memcached. Flags that
// print times (t, l, me) are left to the fixed scripts, since memcached's
// clock may tick during a stream, and so is h: memcached's incr rewrites an
// item in place, keeping its fetched bit, only when no reply still being
// sent holds the item, so in a pipeline h after ma depends on timing.
// Longer hunts (GOCACHED_RANDOM_STREAMS) also meet the rest of that rule,
// about one stream in 6,000: a decr that shortens a number, or an ma on a
// stale item, right after a reply that carries the same item's value
// (memcached copies: an unpadded number, no stale flag; gocached writes in
// place). The default 100 streams have not shown it in any CI run.

var (
	randKeys  = []string{"a", "b", "c"}
	randFlags = []string{"v", "k", "c", "f", "s", "q", "u", "O1", "Oxyz", "T0", "T100", "N0", "N50", "R30",
		"I", "C99999999", "F7", "T-1", "N-1", "b", "MS", "ME", "MA", "MP", "MR", "MD", "MI", "D2", "J5", "P", "Lx", "zz", "Cx"}
)

// randStoredKeys is every key a random stream can store: randKeys, and
// their base64 forms, which meta commands with b name as other keys.
func randStoredKeys() []string {
	keys := slices.Clone(randKeys)
	for _, k := range randKeys {
		keys = append(keys, string(appendBase64(nil, []byte(k))))
	}
	return keys
}

// randomStreams is how many streams each random test runs: 100, or
// GOCACHED_RANDOM_STREAMS for a longer hunt (with GOCACHED_RANDOM_SEED).
func randomStreams() (n int, seed uint64) {
	n, seed = 100, 1
	if v, err := strconv.Atoi(os.Getenv("GOCACHED_RANDOM_STREAMS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.ParseUint(os.Getenv("GOCACHED_RANDOM_SEED"), 10, 64); err == nil {
		seed = v
	}
	return n, seed
}

func randMeta(r *rand.Rand) string {
	cmd := []string{"mg", "ms", "md", "ma", "mn"}[r.IntN(5)]
	if cmd == "mn" {
		return "mn\r\n"
	}
	key := randKeys[r.IntN(len(randKeys))]
	var b strings.Builder
	b.WriteString(cmd + " ")
	flags := make([]string, r.IntN(4))
	for i := range flags {
		flags[i] = randFlags[r.IntN(len(randFlags))]
		// memcached's ma applies T to the old copy of an item that a reply
		// still being sent holds (it then links a new one), so in a
		// pipeline an expiring T on ma may or may not take effect.
		for cmd == "ma" && flags[i] == "T-1" {
			flags[i] = randFlags[r.IntN(len(randFlags))]
		}
	}
	binaryKey := false
	for _, f := range flags {
		if f == "b" {
			binaryKey = true
		}
	}
	if binaryKey {
		key = string(appendBase64(nil, []byte(key)))
	}
	b.WriteString(key)
	value := ""
	if cmd == "ms" {
		value = []string{"", "1", "xy", "10", "abc"}[r.IntN(5)]
		b.WriteString(" " + strconv.Itoa(len(value)))
	}
	for _, f := range flags {
		b.WriteString(" " + f)
	}
	b.WriteString("\r\n")
	if cmd == "ms" {
		b.WriteString(value + "\r\n")
	}
	return b.String()
}

func randText(r *rand.Rand) string {
	key := randKeys[r.IntN(len(randKeys))]
	switch r.IntN(11) {
	case 10:
		return "flush_all\r\n"
	case 0:
		return "set " + key + " 3 0 1\r\n7\r\n"
	case 1:
		return "get " + key + " " + randKeys[r.IntN(len(randKeys))] + "\r\n"
	case 2:
		return "incr " + key + " 3\r\n"
	case 3:
		return "delete " + key + "\r\n"
	case 4:
		return "append " + key + " 0 0 1\r\nz\r\n"
	case 5:
		return "prepend " + key + " 0 0 1\r\n1\r\n"
	case 6:
		return "decr " + key + " 1\r\n"
	case 7:
		return "gat 100 " + key + "\r\n"
	case 8:
		return "add " + key + " 1 0 2\r\n12\r\n"
	}
	return "touch " + key + " 100\r\n"
}

func TestRandomMetaAgainstMemcached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t) // meta replies are 1.6.45's
	n, seed := randomStreams()
	r := rand.New(rand.NewPCG(seed, 9))
	for i := range n {
		var in strings.Builder
		for range 4 + r.IntN(16) {
			if r.IntN(4) == 0 {
				in.WriteString(randText(r))
			} else {
				in.WriteString(randMeta(r))
			}
		}
		in.WriteString("mn\r\n")
		stream := in.String()
		flushMemcached(t, addr, randStoredKeys()...)
		got := driveFresh(t, newStillEnv, []byte(stream))
		ref := exchangeLike(t, addr, stream, got)
		if g, w := normalizeMeta(got.out), normalizeMeta(ref.out); g != w || got.closed != ref.closed {
			t.Fatalf("stream %d %q\nmemcached: %q\ngocached:  %q", i, stream, w, g)
		}
	}
}

func randBinary(r *rand.Rand, opaque uint32) string {
	key := randKeys[r.IntN(len(randKeys))]
	var cas uint64
	if r.IntN(8) == 0 {
		cas = 99999999
	}
	ops := []uint8{opGet, opGetQ, opGetK, opGetKQ, opSet, opSetQ, opAdd, opAddQ, opReplace, opReplaceQ,
		opDelete, opDeleteQ, opIncrement, opIncrementQ, opDecrement, opDecrementQ, opAppend, opAppendQ,
		opPrepend, opPrependQ, opTouch, opGAT, opGATQ, opGATK, opGATKQ, opNoop, opFlush, opFlushQ, opVersion}
	op := ops[r.IntN(len(ops))]
	switch base, _ := quietBase(op); base {
	case opSet, opAdd, opReplace:
		return binReq(op, key, setExt(uint32(r.IntN(3)), 0), []string{"1", "ab", ""}[r.IntN(3)], opaque, cas)
	case opAppend, opPrepend:
		return binReq(op, key, "", "9", opaque, cas)
	case opIncrement, opDecrement:
		exp := uint32(0)
		if r.IntN(2) == 0 {
			exp = 0xffffffff
		}
		return binReq(op, key, arithExt(uint64(r.IntN(4)), uint64(r.IntN(20)), exp), "", opaque, cas)
	case opTouch, opGAT, opGATK:
		return binReq(op, key, be32(100), "", opaque, 0)
	case opNoop, opVersion:
		return binReq(op, "", "", "", opaque, 0)
	case opFlush:
		return binReq(op, "", "", "", opaque, 0)
	case opDelete:
		return binReq(op, key, "", "", opaque, cas)
	}
	return binReq(op, key, "", "", opaque, 0)
}

// paddedNumber matches a counter that incr/decr shortened in place. memcached
// rewrites in place (padding with spaces) only when no reply still being
// sent holds the item, else it stores the bare number: in a pipeline that
// depends on timing, so random streams compare counters unpadded.
var paddedNumber = regexp.MustCompile(`val="([0-9]+) +"`)

func TestRandomBinaryAgainstMemcached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	n, seed := randomStreams()
	r := rand.New(rand.NewPCG(seed, 4))
	for i := range n {
		var in strings.Builder
		n := 4 + r.IntN(16)
		for j := range n {
			in.WriteString(randBinary(r, uint32(j)))
		}
		in.WriteString(binReq(opNoop, "", "", "", 0xffff, 0))
		stream := in.String()
		flushMemcached(t, addr, randStoredKeys()...)
		got := runBinary(t, stream)
		ref := exchangeWant(t, addr, stream, max(1, len(got.out)), got.closed)
		g := paddedNumber.ReplaceAllString(describePackets(got.out, got.closed), `val="$1"`)
		w := paddedNumber.ReplaceAllString(describePackets(ref.out, ref.closed), `val="$1"`)
		if g != w {
			t.Fatalf("stream %d\nmemcached:\n%s\ngocached:\n%s", i, w, g)
		}
	}
}
