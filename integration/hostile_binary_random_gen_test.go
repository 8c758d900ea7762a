package integration

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The request grammar of TestRandomBinaryDifferential: memcached's binary
// protocol, every opcode 1.6.18 knows and some it does not, with random
// opaques, CAS values (live ones read back by a sync request, stale ones,
// ones no item has, 0), extras of the right and wrong lengths, keys of 0 to
// 65535 bytes (any byte values: binary keys may hold spaces, newlines and
// NULs), nonzero data types and vbucket ids (memcached ignores both).
//
// A request that makes memcached close the connection (proto_bin.c:
// a wrong magic, a key longer than the body, a key over 250 bytes, extras,
// key or body lengths an opcode does not take, quit) ends the script; a
// NOOP after it (binCanary) shows whether the server really closed.
//
// Left out on purpose, each timing-dependent in memcached itself:
//   - a delayed flush (a relative delay, or an absolute time in the past or
//     future) after an immediate one: memcached keeps one oldest_live time,
//     so the delayed flush un-flushes the items the earlier flush hid,
//     unless its LRU maintainer or crawler reaped them first;
//   - relative TTLs under 1000 s, which may expire mid-script;
//   - counters in [2^63, 2^64): safe_strtoull's strchr for a minus sign
//     runs past the item's data (see numericValues), so incr deltas stay
//     small and the 2^64-1 wrap is only applied to two-digit counters;
//   - append or prepend to a counter an incr may have rewritten in place
//     (space-padded) or as a new item, which memcached decides by whether an
//     unsent get reply still holds the item (see randGen's counted);
//   - replies memcached has not sent when it closes (they may be lost,
//     see closing): a sync comes first;
//   - stats items and slabs (see misc).
//
// And differences gocached keeps:
//   - a too-large value that is never sent: memcached holds its "Too
//     large." until it has swallowed the value, gocached answers at once,
//     so values are always sent whole;
//   - append or prepend near the largest item size (see big).

const (
	binSyncTag = 0x5e       // top byte of a sync request's opaque
	binEachOpq = 0xeac4eac4 // the marker NOOP when replaying request by request
	binCanary  = 0xca4a41e5 // the NOOP after a request that closes
	binNoCAS   = 0x00abcdef12345678
)

// Opcodes memcached 1.6.18 implements.
const (
	bGet, bSet, bAdd, bReplace, bDelete, bIncr, bDecr, bQuit, bFlush, bGetQ = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09
	bNoop, bVersion, bGetK, bGetKQ, bAppend, bPrepend, bStat, bSetQ, bAddQ  = 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12
	bReplaceQ, bDeleteQ, bIncrQ, bDecrQ, bQuitQ, bFlushQ, bAppendQ          = 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19
	bPrependQ, bVerbosity, bTouch, bGAT, bGATQ, bSASLList, bSASLAuth        = 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x20, 0x21
	bSASLStep, bGATK, bGATKQ                                                = 0x22, 0x23, 0x24
)

type binRandReq struct {
	send    []byte
	note    string // what it is, for failure messages
	sync    uint32 // when set, the step ends here and awaits the reply with this opaque
	casFrom uint32 // when set, send[16:24] is the CAS in the reply to this sync
	stale   bool   // with casFrom: one more than that CAS, which no item has
}

type binRandGen struct {
	r       *rand.Rand
	reqs    []binRandReq
	syncs   int
	closed  bool            // a request that closes the connection was added
	flushed bool            // an immediate flush was added (see the note on delayed ones)
	counted map[string]bool // as randGen's
	// big holds keys that may hold a value near the largest item: no
	// append or prepend near that limit, where gocached's store does not
	// count the 4 bytes of the old item's nonzero flags as memcached does.
	big map[string]bool
}

func newBinRandGen(seed uint64) *binRandGen {
	return &binRandGen{r: rand.New(rand.NewPCG(seed, 0x62696e61)), counted: map[string]bool{}, big: map[string]bool{}}
}

func (g *binRandGen) n(k int) int           { return g.r.IntN(k) }
func (g *binRandGen) chance(p float64) bool { return g.r.Float64() < p }
func pickOf[T any](g *binRandGen, s ...T) T { return s[g.r.IntN(len(s))] }

// binKeyPool: binary keys are byte strings; k:7 and x:y:z have the ':'
// prefix delimiter of stats detail.
var binKeyPool = []string{"a", "b", "c", "n1", "n2", "n3", "foo", "k:7", "x:y:z", "sp ace", "cr\r\nlf", "nul\x00",
	"\xff\xfe", "Q", strings.Repeat("k", 250), "a b:c", ":lead", "n\x00:x"}

func (g *binRandGen) key() string { return binKeyPool[g.n(len(binKeyPool))] }

// frame builds one request with lengths from its parts.
func frame(op byte, key, ext, val string, opaque uint32, cas uint64) []byte {
	b := make([]byte, 24, 24+len(ext)+len(key)+len(val))
	b[0], b[1] = 0x80, op
	binary.BigEndian.PutUint16(b[2:4], uint16(len(key)))
	b[4] = byte(len(ext))
	binary.BigEndian.PutUint32(b[8:12], uint32(len(ext)+len(key)+len(val)))
	binary.BigEndian.PutUint32(b[12:16], opaque)
	binary.BigEndian.PutUint64(b[16:24], cas)
	return append(append(append(b, ext...), key...), val...)
}

func be32s(v uint32) string { return string(binary.BigEndian.AppendUint32(nil, v)) }
func be64s(v uint64) string { return string(binary.BigEndian.AppendUint64(nil, v)) }

// add appends a request, sometimes with a nonzero data type or vbucket id.
func (g *binRandGen) add(note string, b []byte) *binRandReq {
	if g.chance(0.05) {
		b[5] = byte(1 + g.n(255))
		note += fmt.Sprintf(" dt=%d", b[5])
	}
	if g.chance(0.05) {
		binary.BigEndian.PutUint16(b[6:8], uint16(1+g.n(1023)))
		note += " vb"
	}
	g.reqs = append(g.reqs, binRandReq{send: b, note: note})
	return &g.reqs[len(g.reqs)-1]
}

// closing adds a request after which memcached closes the connection,
// after a sync: memcached closes with the canary unread, which resets the
// connection and drops what it has not sent yet (a long reply may still
// be queued) or, on a wrong magic or a key over its read buffer, replies it
// still holds.
func (g *binRandGen) closing(note string, b []byte) {
	g.sync(g.key())
	g.add(note+" (closes)", b)
	g.closed = true
}

func (g *binRandGen) opaque() uint32 {
	switch g.n(6) {
	case 0:
		return 0
	case 1:
		return uint32(g.n(256))
	}
	for range 100 {
		if o := g.r.Uint32(); o>>24 != binSyncTag && o != binEachOpq && o != binCanary {
			return o
		}
	}
	return 1
}

// sync adds a GETK of key whose reply ends the step and returns its opaque.
func (g *binRandGen) sync(key string) uint32 {
	g.syncs++
	o := uint32(binSyncTag)<<24 | uint32(g.syncs)
	g.reqs = append(g.reqs, binRandReq{send: frame(bGetK, key, "", "", o, 0), note: fmt.Sprintf("sync getk %q", key), sync: o})
	return o
}

// cas picks a request CAS for key: mostly 0, else a live one (a sync reads
// it just before), a stale one, or one no item has.
func (g *binRandGen) cas(key string, p float64) (cas uint64, from uint32, stale bool) {
	if !g.chance(p) {
		return 0, 0, false
	}
	switch g.n(5) {
	case 0:
		return pickOf[uint64](g, binNoCAS, 0xffffffffffffffff, 1<<40), 0, false
	case 1:
		return 0, g.sync(key), true
	}
	return 0, g.sync(key), false
}

// withCAS adds a request whose CAS may come from a sync.
func (g *binRandGen) withCAS(note string, b []byte, from uint32, stale bool) {
	rq := g.add(note, b)
	rq.casFrom, rq.stale = from, stale
	if from != 0 {
		rq.note += fmt.Sprintf(" cas=sync%d", from&0xffffff)
		if stale {
			rq.note += "+1"
		}
	}
}

// exptime: 0, relative TTLs of 1000 s and over, absolute times in the past
// (already expired) and in the far future.
func (g *binRandGen) exptime() uint32 {
	switch g.n(10) {
	case 0:
		return pickOf[uint32](g, 1000, 86400, 2592000)
	case 1:
		return pickOf[uint32](g, 2592001, 1000000000) // absolute, in the past
	case 2:
		return pickOf[uint32](g, 0xffffffff, 0x7fffffff, 0xfffffffe)
	}
	return 0
}

func (g *binRandGen) flags() uint32 {
	switch g.n(6) {
	case 0:
		return 0xffffffff
	case 1:
		return g.r.Uint32()
	case 2:
		return uint32(g.n(100))
	}
	return 0
}

// value is a data block of any bytes, a number, or empty; one of nothing
// but whitespace is left out (see randGen's value).
func (g *binRandGen) value() string {
	switch g.n(10) {
	case 0, 1, 2:
		return numericValues[g.n(len(numericValues))]
	case 3:
		return ""
	}
	n := 1 + g.n(20)
	switch g.n(10) {
	case 0:
		n = 300 + g.n(3000)
	case 1, 2:
		n = 20 + g.n(280)
	}
	b := make([]byte, n)
	for i := range b {
		if g.chance(0.2) {
			b[i] = byte(g.n(256))
		} else {
			b[i] = "abcxyz0123456789 -_"[g.n(19)]
		}
	}
	if strings.Trim(string(b), " \t\r\n\v\f") == "" {
		b[0] = 'x'
	}
	return string(b)
}

// storage is set/add/replace/append/prepend and their quiet forms.
func (g *binRandGen) storage() {
	ops := []byte{bSet, bSet, bSet, bAdd, bReplace, bAppend, bPrepend}
	op := ops[g.n(len(ops))]
	key := g.key()
	val := g.value()
	if g.chance(0.005) {
		// Around the largest value memcached's -I 1m takes (an item of
		// 48 header bytes, key, NUL, value, "\r\n", 8 of CAS and 4 of
		// nonzero flags).
		val = strings.Repeat("v", 1048517-len(key)+g.n(9)-6)
	}
	if g.chance(0.005) {
		// A number padded to around memcached's slab_chunk_max, over
		// which an item is chunked and incr refuses it.
		val = "12" + strings.Repeat(" ", 524226-len(key)+g.n(9)-4)
	}
	if (op == bAppend || op == bPrepend) && (g.counted[key] || g.big[key] || len(val) > 500000) {
		op = bSet
	}
	if len(val) > 500000 {
		g.big[key] = true
	}
	ext := ""
	if op == bSet || op == bAdd || op == bReplace {
		ext = be32s(g.flags()) + be32s(g.exptime())
	}
	cas, from, stale := g.cas(key, 0.25)
	quiet := g.chance(0.3)
	name := map[byte]string{bSet: "set", bAdd: "add", bReplace: "replace", bAppend: "append", bPrepend: "prepend"}[op]
	if quiet {
		op = map[byte]byte{bSet: bSetQ, bAdd: bAddQ, bReplace: bReplaceQ, bAppend: bAppendQ, bPrepend: bPrependQ}[op]
		name += "q"
	}
	note := fmt.Sprintf("%s %q ext=%x vlen=%d", name, abbreviate(key), ext, len(val))
	g.withCAS(note, frame(op, key, ext, val, g.opaque(), cas), from, stale)
	if name == "set" || name == "setq" {
		delete(g.counted, key)
	}
	if quiet && g.chance(0.5) {
		g.add("noop", frame(bNoop, "", "", "", g.opaque(), 0))
	}
}

// retrieval is get/getk/gat/gatk/touch and the quiet forms, a few at a time.
func (g *binRandGen) retrieval() {
	for range 1 + g.n(4) {
		op := pickOf[byte](g, bGet, bGet, bGetQ, bGetK, bGetKQ, bGAT, bGATQ, bGATK, bGATKQ, bTouch)
		key := g.key()
		if g.chance(0.15) {
			key = "miss" + fmt.Sprint(g.n(3))
		}
		ext := ""
		if op >= bTouch {
			ext = be32s(g.exptime())
		}
		b := frame(op, key, ext, "", g.opaque(), pickOf[uint64](g, 0, 0, 0, binNoCAS))
		note := fmt.Sprintf("op=%02x %q ext=%x", op, abbreviate(key), ext)
		if op >= bTouch && g.chance(0.1) {
			// memcached reads no further than the key: bytes the body
			// length counts beyond it are read as the next request.
			binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-24+24))
			b = append(b, frame(bNoop, "", "", "", g.opaque(), 0)...)
			note += " +noop counted in its body"
		}
		g.add(note, b)
	}
	if g.chance(0.6) {
		g.add("noop", frame(bNoop, "", "", "", g.opaque(), 0))
	}
}

// arith is incr/decr with their 20 bytes of extras: delta, initial,
// expiration (0xffffffff: no create on a miss).
func (g *binRandGen) arith() {
	key := pickOf(g, "n1", "n2", "n3", g.key())
	g.counted[key] = true
	if g.chance(0.1) {
		// incr wraps at 2^64: v + (2^64-1) is v-1.
		g.add("set counter", frame(bSet, key, be32s(0)+be32s(0), fmt.Sprint(10+g.n(90)), g.opaque(), 0))
		g.add("incr 2^64-1", frame(bIncr, key, be64s(0xffffffffffffffff)+be64s(0)+be32s(0), "", g.opaque(), 0))
		return
	}
	op := pickOf[byte](g, bIncr, bDecr, bIncrQ, bDecrQ)
	delta := pickOf[uint64](g, 0, 1, 1, uint64(g.n(1000)), 1000000, 1000000000000)
	initial := pickOf[uint64](g, 0, 0, 1, 10, uint64(g.n(100000)), 1000000000000000000)
	exp := pickOf[uint32](g, 0, 0, 0xffffffff, 0xffffffff, g.exptime())
	cas, from, stale := g.cas(key, 0.2)
	note := fmt.Sprintf("op=%02x %q delta=%d initial=%d exp=%#x", op, abbreviate(key), delta, initial, exp)
	g.withCAS(note, frame(op, key, be64s(delta)+be64s(initial)+be32s(exp), "", g.opaque(), cas), from, stale)
	if op == bIncrQ || op == bDecrQ {
		g.add("get", frame(bGet, key, "", "", g.opaque(), 0))
	}
}

func (g *binRandGen) misc() {
	switch g.n(10) {
	case 0, 1:
		key := g.key()
		cas, from, stale := g.cas(key, 0.4)
		op := pickOf[byte](g, bDelete, bDeleteQ)
		g.withCAS(fmt.Sprintf("op=%02x %q", op, abbreviate(key)), frame(op, key, "", "", g.opaque(), cas), from, stale)
	case 2:
		g.add("noop", frame(bNoop, "", "", "", g.opaque(), 0))
	case 3:
		g.add("version", frame(bVersion, "", "", "", g.opaque(), 0))
	case 4:
		g.flush()
	case 5, 6:
		// No "items" or "slabs": they list memcached's slab classes, and a
		// class shows until the LRU maintainer reaps its flushed items.
		group := pickOf(g, "", "", "settings", "sizes", "detail dump", "detail on", "detail off",
			"detail x", "detail", "reset", "resetx", "conns", "bogus", "items ", "slabsx", "settingsx")
		g.add(fmt.Sprintf("stat %q", group), frame(bStat, group, "", "", g.opaque(), 0))
	case 7:
		// Unknown opcodes: memcached reads the extras and key, then
		// swallows as many bytes as the body length says.
		op := pickOf[byte](g, bVerbosity, 0x1f, 0x25, 0x30, 0x3d, 0x89, 0xff)
		ext, key := strings.Repeat("e", pickOf(g, 0, 0, 4, 8, 30)), pickOf(g, "", "", "k", "a:b")
		body := strings.Repeat("z", pickOf(g, 0, 0, 3))
		b := frame(op, key, ext, body, g.opaque(), 0)
		b = append(b, strings.Repeat("y", len(ext)+len(key))...)
		g.add(fmt.Sprintf("unknown op=%02x ext=%d key=%q body=%d", op, len(ext), key, len(body)), b)
	case 8:
		// SASL without -S: "Unknown command", the data swallowed.
		switch g.n(3) {
		case 0:
			g.add("sasl list", frame(bSASLList, "", "", "", g.opaque(), 0))
		default:
			op := pickOf[byte](g, bSASLAuth, bSASLStep)
			mech := pickOf(g, "PLAIN", "PLAIN", strings.Repeat("M", 40))
			g.add(fmt.Sprintf("sasl op=%02x mech of %d", op, len(mech)), frame(op, mech, "", "\x00user\x00pass", g.opaque(), 0))
		}
	default:
		g.add("version", frame(bVersion, "", "", "", g.opaque(), 0))
	}
}

// flush is flush/flushq with no extras, a delay of 0, or a delay (only
// before any immediate flush: see the note at the top).
func (g *binRandGen) flush() {
	op := pickOf[byte](g, bFlush, bFlush, bFlushQ)
	ext, delayed := "", false
	switch g.n(4) {
	case 0:
		ext = be32s(0)
	case 1:
		if !g.flushed {
			ext, delayed = be32s(pickOf[uint32](g, 1000, 86400, 2592001, 1000000000, 0xffffffff)), true
		}
	}
	if !delayed {
		g.flushed = true
	}
	g.add(fmt.Sprintf("op=%02x ext=%x", op, ext), frame(op, "", ext, "", g.opaque(), 0))
}

// malformed adds a request memcached answers with an error and closes on
// (or closes on silently), which ends the script.
func (g *binRandGen) malformed() {
	o := g.opaque()
	key := g.key()
	set := func(key, ext string) []byte { return frame(bSet, key, ext, "v", o, 0) }
	switch g.n(17) {
	case 0:
		b := frame(bNoop, "", "", "", o, 0)
		b[0] = pickOf[byte](g, 0x81, 0x00, 'g', 0x7f)
		g.closing(fmt.Sprintf("magic %#x", b[0]), b)
	case 1:
		b := frame(pickOf[byte](g, bGet, bSet, bAppend, 0x50), key, pickOf(g, "", "eeeeeeee"), "", o, 0)
		binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-24-1))
		g.closing("key and extras longer than body", b)
	case 2:
		long := strings.Repeat("L", pickOf(g, 251, 252, 300))
		op := pickOf[byte](g, bGet, bGetK, bDelete, bStat, 0x50, bVerbosity, bSASLAuth)
		g.closing(fmt.Sprintf("op=%02x key of %d", op, len(long)), frame(op, long, "", "", o, 0))
	case 3:
		g.closing("set key of 251", set(strings.Repeat("L", 251), be32s(0)+be32s(0)))
	case 4:
		g.closing("get with extras", frame(pickOf[byte](g, bGet, bGetQ, bGetK), key, "ee", "", o, 0))
	case 5:
		g.closing("empty key", frame(pickOf[byte](g, bGet, bDelete, bAppend, bTouch, bIncr, bSASLAuth), "", "", "", o, 0))
	case 6:
		g.closing("set with bad extras", set(key, strings.Repeat("e", pickOf(g, 0, 4, 12))))
	case 7:
		g.closing("append with extras", frame(pickOf[byte](g, bAppend, bPrependQ), key, be32s(0)+be32s(0), "v", o, 0))
	case 8:
		g.closing("delete with extras", frame(pickOf[byte](g, bDelete, bDeleteQ), key, be32s(0), "", o, 0))
	case 9:
		g.closing("incr with bad extras", frame(bIncr, key, strings.Repeat("e", pickOf(g, 0, 8, 16)), "", o, 0))
	case 10:
		op := pickOf[byte](g, bNoop, bVersion, bQuit, bSASLList)
		g.closing(fmt.Sprintf("op=%02x with a body", op), frame(op, pickOf(g, "", "k"), "", "x", o, 0))
	case 11:
		g.closing("flush with bad extras", frame(bFlush, pickOf(g, "", "k"), pickOf(g, "ee", "eeeeeeee", ""), pickOf(g, "", "x"), o, 0))
	case 12:
		g.closing("stat/touch with bad extras", frame(pickOf[byte](g, bStat, bTouch, bGAT), key, pickOf(g, "e", "eeeeeeee"), "", o, 0))
	case 13:
		g.closing("quit", frame(pickOf[byte](g, bQuit, bQuitQ), "", "", "", o, 0))
	case 14:
		g.closing("sasl with extras", frame(pickOf[byte](g, bSASLAuth, bSASLStep), "PLAIN", "ee", "", o, 0))
	case 15:
		g.closing("get with a long body", frame(bGet, key, "", "x", o, 0))
	default:
		// A header, extras and key over memcached's 16 KB read buffer.
		n := pickOf(g, 16361, 20000, 65535)
		b := frame(pickOf[byte](g, bGet, bSet, 0x50), strings.Repeat("K", n), "", "", o, 0)
		g.closing(fmt.Sprintf("key of %d", n), b[:min(len(b), 24+16384+g.n(100))])
	}
}

// script generates about n requests.
func (g *binRandGen) script(n int) []binRandReq {
	for len(g.reqs) < n && !g.closed {
		switch w := g.n(100); {
		case w < 30:
			g.storage()
		case w < 55:
			g.retrieval()
		case w < 67:
			g.arith()
		case w < 98 || !g.chance(0.3):
			g.misc()
		default:
			g.malformed()
		}
	}
	if g.closed {
		g.reqs = append(g.reqs, binRandReq{send: frame(bNoop, "", "", "", binCanary, 0), note: "canary noop"})
	} else {
		g.add("noop", frame(bNoop, "", "", "", g.opaque(), 0))
	}
	return g.reqs
}
