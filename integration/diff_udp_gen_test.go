package integration

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The cases of TestUDPDifferential.

// udpBin is a binary-protocol request: opcode op, key, extras and value.
func udpBin(op byte, key, extras, value string) string {
	h := make([]byte, 24)
	h[0], h[1] = 0x80, op
	h[2], h[3] = byte(len(key)>>8), byte(len(key))
	h[4] = byte(len(extras))
	body := len(extras) + len(key) + len(value)
	h[8], h[9], h[10], h[11] = byte(body>>24), byte(body>>16), byte(body>>8), byte(body)
	return string(h) + extras + key + value
}

// udpValueOfReply returns a value length whose "get KEY" reply ("VALUE
// KEY 0 N\r\n", data, "\r\nEND\r\n") is exactly size bytes.
func udpValueOfReply(key string, size int) int {
	for n := size; n > 0; n-- {
		if len("VALUE "+key+" 0 "+strconv.Itoa(n)+"\r\n")+n+len("\r\nEND\r\n") == size {
			return n
		}
	}
	panic("no value length for " + strconv.Itoa(size))
}

func udpPattern(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%07d|", i)
	}
	return b.String()[:n]
}

// udpScripted covers the framing, the cut of long replies, one request of
// each kind and the malformed datagrams memcached drops or answers.
func udpScripted() []udpCase {
	var cs []udpCase
	id := uint16(1)
	add := func(name, payload string) *udpCase {
		cs = append(cs, udpReq(name, id, payload))
		id++
		return &cs[len(cs)-1]
	}
	multi := func(name, payload string) { add(name, payload).multi = true }
	add("set a", "set a 0 0 1\r\nx\r\n")
	add("set b", "set b 5 0 2\r\nyy\r\n")
	add("set n", "set n 0 0 2\r\n10\r\n")
	add("get", "get a\r\n")
	add("get hit miss hit", "get a z b\r\n")
	add("get miss hit", "get z a\r\n")
	add("get misses", "get z y x w\r\n")
	add("get hits spaces", "get  a b  a \r\n")
	add("gets", "gets a z b\r\n")
	add("gat", "gat 1000 z a b\r\n")
	add("gats", "gats 1000 a b y\r\n")
	add("gat bad exptime", "gat x a b\r\n")
	add("get key too long", "get a "+strings.Repeat("L", 251)+" b\r\n")
	add("get 30 keys", "get"+strings.Repeat(" a z", 15)+"\r\n")
	add("get long line", "get"+strings.Repeat(" zzzz", 500)+" a\r\n")
	add("get long line no newline", "get"+strings.Repeat(" zzzz", 500))
	add("touch", "touch a 1000\r\n")
	add("incr", "incr n 5\r\n")
	add("decr", "decr n 100\r\n")
	add("incr non-numeric", "incr a 1\r\n")
	add("delete miss", "delete z\r\n")
	add("delete noreply", "delete b noreply\r\n")
	add("get deleted", "get b\r\n")
	add("set noreply", "set c 0 0 1 noreply\r\nc\r\n")
	add("bogus", "bogus\r\n")
	add("empty line", "\r\n")
	add("get no key", "get\r\n")
	add("version", "version\r\n")
	add("verbosity", "verbosity 1\r\n")
	add("verbosity noreply", "verbosity 0 noreply\r\n")
	add("stats", "stats\r\n").stats = true
	add("stats settings", "stats settings\r\n").stats = true
	add("stats detail dump", "stats detail dump\r\n")
	add("ms", "ms m 3 T0 F7\r\nabc\r\n")
	add("mg", "mg m v f k s t c O12\r\n")
	add("mg miss", "mg z v\r\n")
	add("mg quiet miss", "mg z v q\r\n")
	add("mg quiet hit", "mg m v q k\r\n")
	add("md quiet miss", "md z q\r\n")
	add("ma miss", "ma z\r\n")
	add("ma autovivify", "ma n9 N0 J13 v\r\n")
	add("ma", "ma n9 MD D3 v\r\n")
	add("md quiet", "md n9 q\r\n")
	add("mn", "mn\r\n")
	add("multiget ending in \\n", "get a z a\n")
	add("multiget ending in \\r\\r\\n", "get a z a\r\r\n")
	add("multiget ending in a space", "gets z a \r\n")
	add("NUL in a multiget", "get a\x00 b\r\n")
	add("key with a tab", "get t\tab a\r\n")
	for _, cmd := range []string{"shutdown", "refresh_certs", "slabs automove 1", "lru mode flat", "lru_crawler sleep 100",
		"cache_memlimit 100", "misbehave", "stats detail on", "stats bogus"} {
		add(cmd, cmd+"\r\n")
	}
	for _, cmd := range []string{"stats conns", "stats items", "stats slabs", "stats sizes"} {
		add(cmd, cmd+"\r\n").stats = true
	}
	multi("ms invalid, its data a command", "ms m x\r\nabc\r\n")

	// Replies of one datagram and just over; two and just over.
	for _, size := range []int{1392, 1393, 2784, 2785, 5000} {
		n := udpValueOfReply("e", size)
		add(fmt.Sprintf("set %d", n), fmt.Sprintf("set e 0 0 %d\r\n%s\r\n", n, udpPattern(n)))
		add(fmt.Sprintf("get reply of %d bytes", size), "get e\r\n")
	}
	big := udpPattern(20000)
	add("set big", "set big 0 0 20000\r\n"+big+"\r\n")
	add("get big", "get big\r\n")
	add("get big a big z", "get big a big z\r\n")
	add("gets z big", "gets z big\r\n")
	add("mg big", "mg big v k s\r\n")
	huge := udpPattern(65000) // near the largest IPv4 datagram
	add("set huge", "set huge 0 0 65000\r\n"+huge+"\r\n")
	add("get huge a", "get huge a\r\n")
	multi("30 requests", strings.Repeat("set r 0 0 1 noreply\r\nr\r\nincr n 1\r\n", 15)+"get r n\r\n")

	// Framing: the header's fields.
	cs = append(cs, udpCase{name: "3 bytes", pkt: []byte("\x00\x07\x00")},
		udpCase{name: "header only", pkt: udpFrame(8, 0, 1, 0, "")},
		udpCase{name: "header and 1 byte", pkt: udpFrame(9, 0, 1, 0, "\n")},
		udpCase{name: "count 0", pkt: udpFrame(10, 0, 0, 0, "get a\r\n")},
		udpCase{name: "count 2", pkt: udpFrame(11, 0, 2, 0, "get a\r\n")},
		udpCase{name: "count 257", pkt: udpFrame(12, 0, 257, 0, "get a\r\n")},
		udpCase{name: "sequence 1", pkt: udpFrame(13, 1, 1, 0, "get a\r\n")},
		udpCase{name: "sequence 1 of 2", pkt: udpFrame(14, 1, 2, 0, "get a\r\n")},
		udpCase{name: "reserved", pkt: udpFrame(15, 0, 1, 0xffff, "get a\r\n")},
		udpCase{name: "id 0", pkt: udpFrame(0, 0, 1, 0, "get a z\r\n")},
		udpCase{name: "id ffff", pkt: udpFrame(0xffff, 0, 1, 0, "get a\r\n")},
	)
	id = 100
	add("no newline", "get a")
	add("no newline after \\r", "get a\r")
	add("then an incomplete line", "get a z\r\nget b")
	add("junk line over 2048, no newline", "delete "+strings.Repeat("k", 3000))
	add("HTTP request line", "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	add("multiget, then junk over 2048 without a newline", "get a z\r\n"+strings.Repeat("j", 3000))
	// Lines over 2048 bytes with their newline: memcached meets the newline
	// in the same read and serves them, whatever the command.
	add("delete with a key over 2048", "delete "+strings.Repeat("k", 3000)+"\r\n")
	add("version with 3000 bytes of junk", "version "+strings.Repeat("x", 3000)+"\r\n")
	add("mn with 3000 bytes of junk", "mn "+strings.Repeat("x", 3000)+"\r\n")
	add("mg with 1500 flags", "mg a"+strings.Repeat(" v", 1500)+"\r\n")
	add("unknown command over 2048", strings.Repeat("x", 3000)+"\r\n")
	// (Not a set whose key is over 2048 bytes: memcached 1.6.45 stops
	// parsing at the key, then swallows as many bytes as the length its
	// parser last read, on the worker's one UDP connection, so what follows
	// depends on the requests before.)
	multi("data block too long", "set a 0 0 1\r\nxyz\r\n")
	multi("data block bad end", "set a 0 0 1\r\nxy\r\n")
	add("get after bad data", "get a\r\n")

	// Several requests in one datagram.
	multi("two gets", "get a\r\nget z\r\n")
	multi("set, get, multiget", "set c 0 0 1\r\nc\r\nget c\r\nget z y\r\n")
	multi("quiet mg and mn", "mg zz v q\r\nmn\r\n")
	multi("multiget twice", "get a z\r\nget z a\r\n")
	multi("noreply then get", "set c 0 0 2 noreply\r\ncc\r\nget c\r\n")
	multi("verbosity and flush_all", "verbosity 0\r\nflush_all 0 noreply\r\nget a\r\n")
	add("set a again", "set a 0 0 1\r\nx\r\n")

	// The binary protocol, which memcached also answers over UDP.
	add("binary noop", udpBin(0x0a, "", "", ""))
	add("binary version", udpBin(0x0b, "", "", ""))
	add("binary set", udpBin(0x01, "bk", "\x00\x00\x00\x05\x00\x00\x00\x00", "hello"))
	add("binary get", udpBin(0x00, "bk", "", ""))
	add("binary getk", udpBin(0x0c, "bk", "", ""))
	add("binary get miss", udpBin(0x00, "zz", "", ""))
	add("binary getq miss", udpBin(0x09, "zz", "", ""))
	add("binary setq", udpBin(0x11, "bq", "\x00\x00\x00\x00\x00\x00\x00\x00", "v"))
	add("binary incr", udpBin(0x05, "bn", "\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00", ""))
	add("binary unknown", udpBin(0x55, "", "", ""))
	add("binary short", "\x80\x0a\x00\x00")
	add("binary, then a text line shorter than a header", udpBin(0x0b, "", "", "")+"get a\r\n")
	multi("binary getq miss and noop", udpBin(0x09, "zz", "", "")+udpBin(0x0a, "", "", ""))
	multi("binary getkq hit and noop", udpBin(0x0d, "bk", "", "")+udpBin(0x0a, "", "", ""))
	add("binary big get", udpBin(0x00, "big", "", ""))
	add("binary flushq", udpBin(0x18, "", "", ""))
	add("flushed", "get a big\r\n")
	add("flush_all", "flush_all\r\n")
	return cs
}

// udpQuitCases run last on a pair: after quit (or a binary protocol error,
// such as a key over 250 bytes) memcached answers a datagram only up to its
// first flush (see TestUDPDifferential), so only the first is several
// requests.
func udpQuitCases() []udpCase {
	cs := []udpCase{udpReq("get, quit, get", 200, "get z\r\nquit\r\nget a\r\n")}
	cs[0].multi = true
	for i, p := range []string{"quit\r\n", "  quit now\r\n", "get z y\r\n", "set q 0 0 1 noreply\r\nq\r\nquit\r\n",
		udpBin(0x07, "", "", ""), udpBin(0x17, "", "", ""), udpBin(0x00, strings.Repeat("L", 251), "", ""), "get q\r\n"} {
		cs = append(cs, udpReq(fmt.Sprintf("after quit %d", i), uint16(201+i), p))
	}
	return cs
}

// udpTerminalCase is a datagram that leaves memcached waiting for more
// data, sent last to a fresh pair (after setup) and awaited for a quiet
// period.
type udpTerminalCase struct {
	name  string
	setup []udpCase
	last  udpCase
}

func udpTerminalCases() []udpTerminalCase {
	setA := []udpCase{udpReq("set a", 1, "set a 0 0 1\r\nx\r\n")}
	return []udpTerminalCase{
		{"data block short", nil, udpReq("short", 2, "set k 0 0 10\r\nabc")},
		{"data block missing", setA, udpReq("get then a set without data", 3, "get a z\r\nset k 0 0 3\r\n")},
		{"data block without its end", setA, udpReq("no end", 4, "set k 0 0 1\r\nx\r")},
	}
}

// udpGen generates random datagrams: mostly one request, some several.
// Numeric keys take incr and decr and no append (memcached may leave an
// incremented value space-padded or not, which append would show);
// TTLs are 0, -1 or long, never ones that could run out mid-run.
type udpGen struct {
	r    *rand.Rand
	id   uint16
	lone bool // the datagram holds one text request
}

func newUDPGen(seed uint64) *udpGen {
	return &udpGen{r: rand.New(rand.NewPCG(seed, 0x75647064)), id: 1000}
}

func (g *udpGen) n(k int) int { return g.r.IntN(k) }
func (g *udpGen) pick(s ...string) string {
	return s[g.n(len(s))]
}

var (
	udpTextKeys = []string{"a", "b", "c", "d", "big", "k:1"}
	udpNumKeys  = []string{"n0", "n1", "n2"}
)

func (g *udpGen) textKey() string { return udpTextKeys[g.n(len(udpTextKeys))] }
func (g *udpGen) numKey() string  { return udpNumKeys[g.n(len(udpNumKeys))] }

// anyKey is any key; in a lone text request now and then one of 250
// bytes or one too long. A too-long key in a multiget makes memcached drop
// the replies of the datagram's earlier requests it has not sent yet (a
// protocol-level difference, see TestUDPDifferential); in a binary request
// it is a protocol error, after which memcached answers every datagram
// only up to its first flush (as after quit).
func (g *udpGen) anyKey() string {
	switch g.n(60) {
	case 0:
		return strings.Repeat("K", 250)
	case 1:
		if g.lone {
			return strings.Repeat("L", 251)
		}
	case 2:
		return "c\x01\x7f" // only ' ' ends a key
	}
	if g.n(4) == 0 {
		return g.numKey()
	}
	return g.textKey()
}

func (g *udpGen) exptime() string { return g.pick("0", "0", "0", "1000", "-1") }
func (g *udpGen) noreply() string { return g.pick("", "", "", "", " noreply") }

func (g *udpGen) value() string {
	switch g.n(10) {
	case 0:
		return udpPattern(1300 + g.n(3000))
	case 1:
		return ""
	}
	return udpPattern(1 + g.n(30))
}

func (g *udpGen) cases(n int) []udpCase {
	cs := make([]udpCase, 0, n)
	for range n {
		c := udpReq("", g.id, "")
		k := 1
		if g.n(8) == 0 {
			k = 2 + g.n(2)
		}
		// One protocol per datagram: memcached picks it by the first byte,
		// and the other's bytes would be a protocol error or a long line.
		request := g.text
		if g.n(15) == 0 {
			request = g.binary
		}
		g.lone = k == 1
		var payload strings.Builder
		for range k {
			payload.WriteString(request())
		}
		c.pkt = append(c.pkt, payload.String()...)
		c.multi = k > 1
		c.name = fmt.Sprintf("random %d", g.id)
		switch g.n(40) { // now and then an odd header
		case 0:
			c.pkt[3] = byte(1 + g.n(9)) // sequence number: answered
		case 1:
			c.pkt[7] = byte(1 + g.n(9)) // reserved: answered
		case 2:
			c.pkt[5] = byte(g.n(2) * 2) // a count of 0 or 2: dropped
		case 3:
			c.pkt = c.pkt[:g.n(9)] // no whole header, or nothing after it: dropped
		}
		cs = append(cs, c)
		g.id++
	}
	return cs
}

// text is a random text-protocol request.
func (g *udpGen) text() string {
	switch g.n(14) {
	case 0, 1:
		v := g.value()
		return fmt.Sprintf("%s %s %d %s %d%s\r\n%s\r\n", g.pick("set", "set", "add", "replace"), g.textKey(),
			g.n(3), g.exptime(), len(v), g.noreply(), v)
	case 2:
		v := g.value()
		return fmt.Sprintf("%s %s 0 0 %d%s\r\n%s\r\n", g.pick("append", "prepend"), g.textKey(), len(v), g.noreply(), v)
	case 3:
		v := strconv.Itoa(g.n(1000))
		return fmt.Sprintf("set %s 0 %s %d%s\r\n%s\r\n", g.numKey(), g.exptime(), len(v), g.noreply(), v)
	case 4:
		return fmt.Sprintf("%s %s %d%s\r\n", g.pick("incr", "decr"), g.numKey(), g.n(500), g.noreply())
	case 5, 6, 7:
		keys := make([]string, 1+g.n(5))
		for i := range keys {
			keys[i] = g.anyKey()
		}
		switch g.n(4) {
		case 0:
			return "gets " + strings.Join(keys, " ") + "\r\n"
		case 1:
			return fmt.Sprintf("%s %s %s\r\n", g.pick("gat", "gats"), g.pick("0", "1000"), strings.Join(keys, " "))
		}
		return "get " + strings.Join(keys, " ") + "\r\n"
	case 8:
		if g.n(3) == 0 {
			return fmt.Sprintf("touch %s %s%s\r\n", g.anyKey(), g.pick("0", "1000"), g.noreply())
		}
		return fmt.Sprintf("delete %s%s\r\n", g.anyKey(), g.noreply())
	case 9:
		flags := []string{"v", "k", "f", "s", "t", "c", "q", "O" + strconv.Itoa(g.n(99))}
		var b strings.Builder
		for _, f := range flags {
			if g.n(2) == 0 {
				b.WriteString(" " + f)
			}
		}
		return "mg " + g.anyKey() + b.String() + "\r\n"
	case 10:
		v := g.value()
		return fmt.Sprintf("ms %s %d%s\r\n%s\r\n", g.textKey(), len(v), g.pick("", " q", " T0 F3", " MA", " I", " c"), v)
	case 11:
		return "md " + g.anyKey() + g.pick("", " q", " I", " q k") + "\r\n"
	case 12:
		return "ma " + g.numKey() + g.pick("", " q", " v", " N0 J5 v", " MD D2 v") + "\r\n"
	}
	return g.pick("mn", "version", "bogus", "get", "verbosity 0", "flush_all 0 noreply") + "\r\n"
}

// binary is a random binary-protocol request.
func (g *udpGen) binary() string {
	g.lone = false
	key := g.anyKey()
	switch g.n(8) {
	case 0, 1:
		v := g.value()
		op := []byte{0x01, 0x02, 0x03, 0x11}[g.n(4)] // set, add, replace, setq
		return udpBin(op, key, "\x00\x00\x00\x03\x00\x00\x00\x00", v)
	case 2:
		return udpBin([]byte{0x04, 0x14}[g.n(2)], key, "", "") // delete, deleteq
	case 3:
		extras := "\x00\x00\x00\x00\x00\x00\x00\x03" + "\x00\x00\x00\x00\x00\x00\x00\x00" + "\x00\x00\x00\x00"
		return udpBin([]byte{0x05, 0x06, 0x15}[g.n(3)], g.numKey(), extras, "") // incr, decr, incrq
	case 4:
		return udpBin([]byte{0x0a, 0x0b}[g.n(2)], "", "", "") // noop, version
	case 5:
		return udpBin(0x1c, key, "\x00\x00\x03\xe8", "") // touch
	}
	return udpBin([]byte{0x00, 0x09, 0x0c, 0x0d}[g.n(4)], key, "", "") // get, getq, getk, getkq
}
