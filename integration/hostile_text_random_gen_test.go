package integration

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The request grammar of TestRandomDifferential. A generated script is a
// list of requests split into steps: a step ends where a later request needs
// a live CAS unique, with a sync request ("mg KEY c k Os<N>") whose reply
// carries the unique; {cas:Os<N>} (or {cas:Os<N>-1}, a stale one) in a later
// request stands for it.
//
// Left out on purpose, each a documented or timing-dependent difference:
//   - mg/ms/md/ma flag E: gocached takes it as memcached 1.6.21 does, 1.6.18
//     answers "CLIENT_ERROR invalid flag" (README, "plus E from 1.6.21");
//   - ms with a key over 250 bytes or a malformed length, and a text
//     storage line rejected after its length (a key over 250 bytes, a bad
//     flags, exptime or CAS token) with a data block memcached would answer:
//     memcached runs the data block as commands, gocached swallows it
//     (README; such a line here carries rejectedData);
//   - lines over 2048 bytes (README), flush_all with a delay, TTLs between 1
//     and 999 s, stats (numbers differ by design).

// randKeyPool is small so that requests hit each other's items.
// Zm9v and bjE= are foo and n1 in base64, for meta's b flag; two keys hold
// control characters, which memcached takes (only ' ' ends a key).
var randKeyPool = []string{"a", "b", "c", "n1", "n2", "n3", "foo", "bar", "k:7", "key-10", "zz", "Q", "Zm9v", "bjE=",
	"t\tab", "c\x01\x7f"}

type randReq struct {
	send string
	sync string // when set, the step ends here and awaits this marker
}

type randGen struct {
	r     *rand.Rand
	reqs  []randReq
	syncs int
	// eaten is set after a request whose data length was too long: the next
	// request loses its first bytes, so it must be one whose remains are a
	// short line.
	eaten bool
	// counted holds keys an incr, decr or ma may have left space-padded
	// (in place) or not (a new item), which in memcached depends on whether
	// its LRU maintainer held the item for a moment: an append or prepend
	// would make that visible, so they wait until a set rewrites the key.
	counted map[string]bool
}

// plainKey is the key a pool key names with or without the b flag.
func plainKey(k string) string {
	switch k {
	case "bjE=":
		return "n1"
	case "Zm9v":
		return "foo"
	}
	return k
}

func newRandGen(seed uint64) *randGen {
	return &randGen{r: rand.New(rand.NewPCG(seed, 0x6d656d63)), counted: map[string]bool{}}
}

func (g *randGen) n(k int) int           { return g.r.IntN(k) }
func (g *randGen) chance(p float64) bool { return g.r.Float64() < p }
func (g *randGen) pick(s ...string) string {
	return s[g.r.IntN(len(s))]
}

func (g *randGen) key() string {
	if g.chance(0.01) {
		return strings.Repeat("L", 251) // too long
	}
	if g.chance(0.01) {
		return strings.Repeat("k", 250)
	}
	return randKeyPool[g.n(len(randKeyPool))]
}

// okKey is a key within memcached's limit.
func (g *randGen) okKey() string { return randKeyPool[g.n(len(randKeyPool))] }

func (g *randGen) add(send string) { g.reqs = append(g.reqs, randReq{send: g.mutate(send)}) }

// mutate sometimes respaces a request's command line, which memcached's
// tokenizer takes in its stride: a doubled space, a trailing space, or a
// bare "\n" ending.
func (g *randGen) mutate(send string) string {
	if !g.chance(0.08) {
		return send
	}
	end := strings.Index(send, "\r\n")
	if end < 0 {
		return send
	}
	line, rest := send[:end], send[end+2:]
	switch g.n(3) {
	case 0:
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			line = line[:i] + " " + line[i:]
		}
	case 1:
		line += " "
	default:
		return line + "\n" + rest
	}
	return line + "\r\n" + rest
}

// syncPoint ends the step: the next request goes out only once every
// earlier reply has come back.
func (g *randGen) syncPoint() {
	g.syncs++
	m := "Os" + strconv.Itoa(g.syncs)
	g.reqs = append(g.reqs, randReq{send: "mg " + g.okKey() + " " + m + "\r\n", sync: m})
}

// casFor emits a sync that reads key's cas unique and returns the
// placeholder for it (or for a stale value).
func (g *randGen) casFor(key string) string {
	g.syncs++
	m := "Os" + strconv.Itoa(g.syncs)
	g.reqs = append(g.reqs, randReq{send: "mg " + key + " c k " + m + "\r\n", sync: m})
	if g.chance(0.2) {
		return "{cas:" + m + "-1}"
	}
	return "{cas:" + m + "}"
}

func (g *randGen) exptime() string {
	switch g.n(10) {
	case 0:
		return "-1"
	case 1:
		return g.pick("1000", "86400", "2592000")
	case 2:
		return g.pick("1000000000", "2592001") // absolute, in the past
	case 3:
		return strconv.Itoa(1000 + g.n(100000))
	}
	return "0"
}

func (g *randGen) clientFlags() string {
	switch g.n(8) {
	case 0:
		return "4294967295"
	case 1:
		return strconv.Itoa(g.n(70000))
	case 2:
		return g.pick("1", "42", "2147483648")
	}
	return "0"
}

// numericValues are counters for incr/decr/ma. None is in [2^63, 2^64):
// memcached's safe_strtoull checks such a number for a minus sign with
// strchr, which runs past the item's data into whatever memory follows (no
// NUL ends it), so whether memcached calls it "non-numeric" varies from run
// to run. 2^64 and over fail the parse on every run and are kept.
var numericValues = []string{"0", "1", "10", "99", "1000", "007", "1000000000000000000",
	"18446744073709551616", "-5", "abc", "12abc", " 5", "4294967296", "99999999999999999999"}

// value is a data block: numbers, empty, or bytes including \r, \n, NUL.
func (g *randGen) value() string {
	switch g.n(10) {
	case 0, 1, 2:
		return numericValues[g.n(len(numericValues))]
	case 3:
		return ""
	}
	var n int
	switch g.n(10) {
	case 0:
		n = 300 + g.n(2701)
	case 1, 2, 3:
		n = 20 + g.n(280)
	default:
		n = 1 + g.n(20)
	}
	const alphabet = "abcxyz0123456789 -_ABC"
	b := make([]byte, n)
	for i := range b {
		switch g.n(40) {
		case 0:
			b[i] = '\r'
		case 1:
			b[i] = '\n'
		case 2:
			b[i] = 0
		default:
			b[i] = alphabet[g.n(len(alphabet))]
		}
	}
	// A value of nothing but whitespace is left out: memcached's incr
	// (strtoull) skips it and its "\r\n" and parses whatever memory
	// follows the item.
	if strings.Trim(string(b), " \t\r\n\v\f") == "" {
		b[0] = 'x'
	}
	return string(b)
}

func (g *randGen) noreply() string {
	if g.chance(0.15) {
		return " noreply"
	}
	return ""
}

// storage is set/add/replace/append/prepend/cas.
func (g *randGen) storage() {
	cmd := g.pick("set", "set", "set", "add", "replace", "append", "prepend", "cas")
	key := g.key()
	if (cmd == "append" || cmd == "prepend") && g.counted[plainKey(key)] {
		cmd = "set" // see counted
	}
	val := g.value()
	wellFormed := true
	casArg := ""
	if cmd == "cas" {
		switch g.n(6) {
		case 0:
			casArg = " " + g.pick("0", "abc", "99999999999", "-1")
		default:
			if len(key) <= 250 {
				casArg = " " + g.casFor(key)
			} else {
				casArg = " 1"
			}
		}
	}
	flags, exp := g.clientFlags(), g.exptime()
	switch g.n(40) {
	case 0:
		flags = g.pick("x", "-1", "4294967296")
		wellFormed = false
	case 1:
		exp = g.pick("x", "1.5")
		wellFormed = false
	}
	// A line memcached rejects after reading its length (a key over 250
	// bytes, a bad flags, exptime or CAS token): gocached swallows the data
	// block, memcached runs it as the next command (README). The block is
	// then one that memcached runs silently and to no effect, so that both
	// reply alike.
	rejected := !wellFormed || len(key) > 250 || casArg == " abc" || casArg == " -1"
	if rejected {
		val = rejectedData
		wellFormed = false
	}
	length := strconv.Itoa(len(val))
	if !rejected && g.chance(0.04) {
		// A wrong length: memcached answers "CLIENT_ERROR bad data chunk"
		// and reads on from where the declared length ended.
		val = strings.Repeat("x", 1+g.n(20))
		wellFormed = false
		d := 1 + g.n(2)
		if g.chance(0.5) {
			length = strconv.Itoa(len(val) + d)
			g.eatenNext()
		} else {
			length = strconv.Itoa(max(0, len(val)-d))
		}
	}
	g.add(fmt.Sprintf("%s %s %s %s %s%s%s\r\n%s\r\n", cmd, key, flags, exp, length, casArg, g.noreply(), val))
	if cmd == "set" && wellFormed {
		delete(g.counted, plainKey(key)) // a new item, unpadded
	}
}

// rejectedData is the data block of a rejected storage line: a command
// memcached runs without a reply or an effect (no request uses its key).
const rejectedData = "delete rejected-data-block noreply"

// eatenNext makes the next request a short line (its first bytes are read
// as the previous data block).
func (g *randGen) eatenNext() { g.eaten = true }

func (g *randGen) keys() string {
	ks := make([]string, 1+g.n(5))
	for i := range ks {
		ks[i] = g.key()
		if g.chance(0.15) {
			ks[i] = "miss" + strconv.Itoa(i)
		}
	}
	return strings.Join(ks, " ")
}

func (g *randGen) retrieval() {
	keys := g.keys()
	cmd := g.pick("get", "get", "gets", "gat", "gats")
	if cmd == "gat" || cmd == "gats" {
		exp := g.exptime()
		if g.chance(0.05) {
			exp = "abc"
		}
		cmd += " " + exp
	}
	g.getLine(cmd + " " + keys + "\r\n")
}

// getLine adds a retrieval request. One with a key over 250 bytes makes
// memcached drop every reply it has not sent yet, earlier requests' too
// (conn_release_items in process_get_command), which depends on how far
// it got with sending: such a request goes out only after a sync.
func (g *randGen) getLine(req string) {
	for _, k := range strings.Fields(req) {
		if len(k) > 250 {
			g.syncPoint()
			break
		}
	}
	g.add(req)
}

// delta is an incr/decr/ma delta. Deltas of 2^63 and over come only from
// wrap, whose result stays under 2^63 (see numericValues).
func (g *randGen) delta() string {
	switch g.n(12) {
	case 0:
		return "1000000000000000000"
	case 1:
		return "18446744073709551616"
	case 2:
		return g.pick("-1", "abc", "1x", "99999999999999999999")
	case 3:
		return "0"
	}
	return strconv.Itoa(1 + g.n(1000))
}

// arith is incr/decr. Each, like ma, goes out after a sync: memcached
// rewrites a counter in place (space-padded when it shrinks, keeping the
// fetched bit, its TTL applied by ma's T) only when no unsent reply holds the
// item, and otherwise links a new item, so in a pipeline what a later
// append, h or T sees depends on how far memcached got with sending.
func (g *randGen) arith() {
	g.syncPoint()
	if g.chance(0.1) {
		// incr wraps at 2^64: v + (2^64-1) is v-1.
		key := g.pick("n1", "n2", "n3")
		g.add(fmt.Sprintf("set %s 0 0 2\r\n%d\r\nincr %s 18446744073709551615\r\nget %s\r\n", key, 10+g.n(90), key, key))
		g.counted[key] = true
		return
	}
	cmd := g.pick("incr", "decr")
	key := g.pick("n1", "n2", "n3", g.key())
	g.counted[plainKey(key)] = true
	g.add(cmd + " " + key + " " + g.delta() + g.noreply() + "\r\n")
}

func (g *randGen) ttl() string {
	switch g.n(8) {
	case 0:
		return "-1"
	case 1:
		return "0"
	case 2:
		return g.pick("x", "")
	}
	return g.pick("1000", "86400", "2592001")
}

func (g *randGen) opaque() string {
	if g.chance(0.05) {
		return "O" + strings.Repeat("o", 33)
	}
	return "O" + g.pick("1", "abc", "x9", "123456789")
}

// metaFlags picks a random subset of the candidates (each a function, so
// the random choices inside happen only when the flag is taken).
func (g *randGen) metaFlags(cands []func() string) string {
	var out []string
	for _, c := range cands {
		if g.chance(0.3) {
			out = append(out, c())
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if g.chance(0.04) {
		out = append(out, g.pick("zz", "!", "v", "P", "Lfoo", "S3"))
	}
	if len(out) == 0 {
		return ""
	}
	return " " + strings.Join(out, " ")
}

func lit(s string) func() string { return func() string { return s } }

func (g *randGen) meta() {
	key := g.key()
	if len(key) > 250 && g.n(2) == 0 {
		key = g.okKey()
	}
	switch g.n(9) {
	case 0, 1, 2:
		flags := g.metaFlags([]func() string{lit("v"), lit("v"), lit("k"), lit("f"), lit("t"), lit("c"),
			lit("h"), lit("l"), g.opaque, lit("q"), lit("u"), lit("b"), func() string { return "N" + g.ttl() },
			func() string { return "T" + g.ttl() }, func() string { return "R" + g.pick("30", "5000000") }})
		// s only with v: after an incr memcached keeps a shorter number
		// space-padded in place or not, depending on whether a reply still
		// holds the item, so s is compared as the normalised data's length.
		if g.chance(0.3) {
			flags += " v s"
		}
		g.add("mg " + key + flags + "\r\n")
	case 3, 4, 5:
		if len(key) > 250 {
			key = g.okKey() // see the note at the top
		}
		val := g.value()
		var casTok func() string = func() string { return "C" + g.pick("0", "99999999999", "abc") }
		if g.n(2) == 0 {
			cas := g.casFor(key)
			casTok = func() string { return "C" + cas }
		}
		flags := g.metaFlags([]func() string{
			func() string { return "F" + g.clientFlags() }, func() string { return "T" + g.ttl() }, lit("I"),
			func() string { return "M" + g.pick("E", "A", "P", "R", "S", "e", "a", "p", "r", "s", "X", "SS") },
			lit("q"), g.opaque, casTok, lit("k"), lit("c"), lit("b"),
		})
		if g.counted[plainKey(key)] {
			// No appending to a counter (see counted).
			flags = strings.NewReplacer(" MA", " MS", " MP", " MS").Replace(flags)
		}
		g.add(fmt.Sprintf("ms %s %d%s\r\n%s\r\n", key, len(val), flags, val))
	case 6:
		var casTok func() string = func() string { return "C" + g.pick("0", "99999999999", "abc") }
		if g.n(2) == 0 && len(key) <= 250 {
			cas := g.casFor(key)
			casTok = func() string { return "C" + cas }
		}
		g.add("md " + key + g.metaFlags([]func() string{lit("q"), lit("I"), casTok, lit("b"),
			func() string { return "T" + g.ttl() }, g.opaque, lit("k")}) + "\r\n")
	case 7, 8:
		key = g.pick("n1", "n2", "n3", key)
		g.syncPoint() // see arith
		g.counted[plainKey(key)] = true
		var casTok func() string = func() string { return "C" + g.pick("0", "99999999999", "abc") }
		if g.n(3) == 0 && len(key) <= 250 {
			cas := g.casFor(key)
			casTok = func() string { return "C" + cas }
		}
		g.add("ma " + key + g.metaFlags([]func() string{
			func() string { return "N" + g.ttl() },
			func() string { return "J" + g.pick("0", "10", "1000000000000000000", "abc", "-1") },
			func() string { return "D" + g.delta() },
			// No T: memcached applies it to the item it looked up, and when
			// incr links a new item instead of rewriting in place (a longer
			// number, or the LRU maintainer holding a reference for a
			// moment) the new TTL is lost.
			func() string { return "M" + g.pick("I", "i", "+", "D", "d", "-", "X", "II") },
			lit("q"), g.opaque, lit("k"), lit("v"), lit("t"), lit("c"), casTok, lit("b"),
		}) + "\r\n")
	}
}

// script generates about n requests.
func (g *randGen) script(n int) []randReq {
	// memcached hands out CAS unique 1 to the first item stored; a stale
	// unique (one less) for it would be 0, which means "no CAS", while
	// gocached's uniques are never 1. An item outside the pool takes it.
	g.add("set _first 0 0 1\r\nx\r\n")
	for len(g.reqs) < n {
		if g.eaten {
			g.eaten = false
			g.add(g.pick("version", "get a", "mn") + "\r\n")
			continue
		}
		switch w := g.n(100); {
		case w < 25:
			g.storage()
		case w < 45:
			g.retrieval()
		case w < 55:
			g.arith()
		case w < 70:
			g.misc()
		default:
			g.meta()
		}
	}
	if g.eaten {
		g.add("version\r\n")
	}
	g.add("mn\r\n")
	return g.reqs
}
