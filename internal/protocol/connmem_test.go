package protocol

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// The cases below were first run against memcached 1.6.18 started with
// -o read_buf_mem_limit=1 -t 32 -R 500: each worker then has two 16 KiB
// blocks, one for the connection's read buffer and one bundle of 13
// response objects.

// newLimitEnv is an Env with memcached's conn-limits setup.
func newLimitEnv(tb testing.TB, limitMB uint64) *Env {
	tb.Helper()
	env := newSmallEnv(tb)
	tu := DefaultTuning()
	tu.ReadBufMemLimit = limitMB << 20
	env.Settings.Tuning = &tu
	env.Settings.Threads = 32
	env.Settings.ReqsPerEvent = 500
	return env
}

// limitSession is a Session on worker 0 of env.
func limitSession(env *Env) *Session {
	s := NewSession(env)
	s.SetWorker(0)
	return s
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }

func getLine(keys int) string {
	return "get " + strings.TrimSuffix(repeat("foo ", keys), " ") + "\r\n"
}

// binRequest is a binary request header with key and no extras or value.
func binRequest(op byte, key string) []byte {
	h := make([]byte, 24, 24+len(key))
	h[0], h[1] = 0x80, op
	binary.BigEndian.PutUint16(h[2:], uint16(len(key)))
	binary.BigEndian.PutUint32(h[8:], uint32(len(key)))
	return append(h, key...)
}

func TestConnMemLimits(t *testing.T) {
	oom := "SERVER_ERROR out of memory writing get response\r\n"
	getq := bytes.Repeat(binRequest(0x09, "foo"), 1)
	cases := []struct {
		name    string
		in      string
		want    string
		closed  bool
		respOOM uint64
	}{
		{"a get of 13 keys fits one bundle", getLine(13), "END\r\n", false, 0},
		{"a get of 14 keys does not", getLine(14), oom, false, 1},
		{"500 keys, as conn-limits.t", getLine(500), oom, false, 1},
		{"13 pipelined mg", repeat("mg foo v\r\n", 13), repeat("EN\r\n", 13), false, 0},
		{"the 14th pipelined mg closes without a reply", repeat("mg foo v\r\n", 14), "", true, 1},
		// Since memcached 1.6.40 a get's replies wait to be flushed as
		// any command's (1.6.18 wrote them out after each END).
		{"gets stack too", repeat("get foo\r\n", 100), "", true, 1},
		{"so does mn", repeat("mg foo v\r\n", 5) + "mn\r\n" + repeat("mg foo v\r\n", 12),
			repeat("EN\r\n", 5) + "MN\r\n" + repeat("EN\r\n", 12), false, 0},
		{"noreply still takes an object", repeat("set a 0 0 1 noreply\r\nx\r\n", 20), "", true, 1},
		{"13 sets", repeat("set a 0 0 1\r\nx\r\n", 13), repeat("STORED\r\n", 13), false, 0},
		{"the error drops the stacked replies", repeat("mg foo v\r\n", 12) + "get foo foo\r\n", oom, false, 1},
		{"hits too, and the STORED stacked before goes", "set k 0 0 3\r\nabc\r\nget " + strings.TrimSpace(repeat("k ", 14)) + "\r\n",
			oom, false, 1},
		{"binary quiet gets stack", string(bytes.Repeat(getq, 20)) + string(binRequest(0x0a, "")), "", true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newLimitEnv(t, 1)
			r := drive(t, limitSession(env), []byte(c.in))
			if r.out != c.want || r.closed != c.closed {
				t.Errorf("got %q (closed %v), want %q (closed %v)", abbrev(r.out), r.closed, abbrev(c.want), c.closed)
			}
			if got := env.mem.stats(env.Settings).respOOM; got != c.respOOM {
				t.Errorf("response_obj_oom %d, want %d", got, c.respOOM)
			}
		})
	}
}

// A connection waiting for a value's data holds its read buffer and its
// command's response object: with two blocks a worker, a second
// connection there finds no read buffer and is closed (read_buf_oom).
func TestConnMemWaitingCommandHoldsBlocks(t *testing.T) {
	env := newLimitEnv(t, 1)
	a, b := limitSession(env), limitSession(env)
	var aIn []byte
	aIn = append(aIn, "set foo 0 0 2\r\n"...)
	n, out, st := a.Process(aIn, nil)
	if n != 0 || len(out) != 0 || st != NeedMore {
		t.Fatalf("partial set: consumed %d, out %q, %v", n, out, st)
	}
	if r := drive(t, b, []byte("mg foo v\r\n")); !r.closed || r.out != "" {
		t.Fatalf("second connection: %+v, want closed without a reply", r)
	}
	if got := env.mem.stats(env.Settings).readOOM; got != 1 {
		t.Errorf("read_buf_oom %d, want 1", got)
	}
	b.Reset()
	aIn = append(aIn, "hi\r\n"...)
	if n, out, st := a.Process(aIn, nil); n != len(aIn) || string(out) != "STORED\r\n" || st != NeedMore {
		t.Fatalf("set completed: consumed %d, out %q, %v", n, out, st)
	}
	// Both blocks are free again.
	if r := drive(t, b, []byte(repeat("mg foo v\r\n", 13))); r.closed || r.out != repeat("VA 2\r\nhi\r\n", 13) {
		t.Fatalf("after the set: %+v", r)
	}
	a.Reset()
	b.Reset()
	checkIdle(t, env)
}

// Without a limit nothing is refused, and nothing is accounted.
func TestConnMemUnlimited(t *testing.T) {
	env := newLimitEnv(t, 0)
	s := limitSession(env)
	if r := drive(t, s, []byte(repeat("mg foo v\r\n", 500)+getLine(500))); r.closed || r.out != repeat("EN\r\n", 500)+"END\r\n" {
		t.Fatalf("got %q", abbrev(r.out))
	}
	if got := env.mem.stats(env.Settings); got != (memStats{}) {
		t.Errorf("stats without a limit: %+v", got)
	}
}

// `stats` reports the pools as memcached names them, and `stats reset`
// zeroes what memcached's zeroes.
func TestConnMemStats(t *testing.T) {
	env := newLimitEnv(t, 1)
	s := limitSession(env)
	drive(t, s, []byte(getLine(20)))
	stat := func() map[string]uint64 {
		r := drive(t, s, []byte("stats\r\n"))
		m := map[string]uint64{}
		for _, l := range strings.Split(r.out, "\r\n") {
			if f := strings.Fields(l); len(f) == 3 && (strings.HasPrefix(f[1], "read_buf") || strings.HasPrefix(f[1], "response_obj")) {
				m[f[1]], _ = strconv.ParseUint(f[2], 10, 64)
			}
		}
		return m
	}
	want := map[string]uint64{"response_obj_oom": 1, "response_obj_count": 1, "response_obj_bytes": memBlock,
		"read_buf_count": 2, "read_buf_bytes": 2 * memBlock, "read_buf_bytes_free": 0, "read_buf_oom": 0}
	if got := stat(); !equalStats(got, want) {
		t.Errorf("stats %v, want %v", got, want)
	}
	drive(t, s, []byte("stats reset\r\n"))
	want["response_obj_oom"], want["response_obj_count"], want["response_obj_bytes"] = 0, 0, 0
	if got := stat(); !equalStats(got, want) {
		t.Errorf("after stats reset %v, want %v", got, want)
	}
}

func equalStats(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Each case was run against memcached 1.6.18, and those with a get
// before other commands again against 1.6.45, with -o read_buf_mem_limit=1
// -t 32 -R 500 (python sockets, one connection); "big" is a value past
// valueChunk, which gocached sends in pieces and memcached holds the
// response objects of until it is written.
func TestConnMemAsMemcachedFlushes(t *testing.T) {
	oom := "SERVER_ERROR out of memory writing get response\r\n"
	big := repeat("x", 70000)
	bad := repeat("k", 251)
	mg := func(n int) string { return repeat("mg foo v\r\n", n) }
	va := func(n int) string { return repeat("VA 3\r\nabc\r\n", n) }
	bigValue := "VALUE big 0 70000\r\n" + big + "\r\n"
	cases := []struct {
		name    string
		in      []string // one string a read
		want    string
		closed  bool
		respOOM uint64
	}{
		// A multiget holds an object per key until its END is written, a
		// value in pieces included.
		{"14 keys of big values", []string{"get" + repeat(" big", 14) + "\r\n"}, oom, false, 1},
		{"one big value, then 13 small", []string{"get big" + repeat(" foo", 13) + "\r\n"}, oom, false, 1},
		{"13 keys of big values", []string{"get" + repeat(" big", 13) + "\r\n"}, repeat(bigValue, 13) + "END\r\n", false, 0},
		// The get does not flush after its END (memcached 1.6.40 on): its
		// objects, one per key, stay taken with those of what follows.
		{"a big get of 2 keys, then 11 mg", []string{"get big foo\r\n" + mg(11)},
			bigValue + "VALUE foo 0 3\r\nabc\r\nEND\r\n" + va(11), false, 0},
		{"a big get of 2 keys, then 12 mg", []string{"get big foo\r\n" + mg(12)}, "", true, 1},
		{"a big get, then 12 mg", []string{"get big\r\n" + mg(12)}, bigValue + "END\r\n" + va(12), false, 0},
		{"a big get, then 13 mg", []string{"get big\r\n" + mg(13)}, "", true, 1},
		// A storage command whose data came in a later read is read on
		// directly by memcached, which then flushes before reading more.
		{"a set split in its data, then 13 mg", []string{"set s 0 0 4\r\nab", "cd\r\n" + mg(13)}, "STORED\r\n" + va(13), false, 0},
		{"a set split in its data, then 14 mg", []string{"set s 0 0 4\r\nab", "cd\r\n" + mg(14)}, "STORED\r\n", true, 1},
		{"a set with no data yet, then 13 mg", []string{"set s 0 0 4\r\n", "abcd\r\n" + mg(13)}, "STORED\r\n" + va(13), false, 0},
		{"a set split in its line stacks", []string{"set s 0 0 4\r", "\nabcd\r\n" + mg(13)}, "", true, 1},
		// A retrieval that ends in an error does not flush.
		{"get alone, then 13 mg", []string{"get\r\n" + mg(13)}, "", true, 1},
		{"a bad exptime, then 13 mg", []string{"gat abc foo\r\n" + mg(13)}, "", true, 1},
		{"a bad key, then 13 mg", []string{"get foo " + bad + "\r\n" + mg(13)}, "", true, 1},
		{"out of memory, then 13 mg", []string{getLine(14) + mg(13)}, "", true, 2},
		{"out of memory, then 12 mg", []string{getLine(14) + mg(12)}, oom + va(12), false, 1},
		// A bad key takes its object first.
		{"a bad key past 13 keys", []string{"get" + repeat(" foo", 13) + " " + bad + "\r\n"}, oom, false, 1},
		{"a bad key past 12 keys", []string{"get" + repeat(" foo", 12) + " " + bad + "\r\n"}, "CLIENT_ERROR bad command line format\r\n\r\n", false, 0},
		// and gives back those of the keys before it.
		{"a bad key past 12 keys, then 12 mg", []string{"get" + repeat(" foo", 12) + " " + bad + "\r\n" + mg(12)},
			"CLIENT_ERROR bad command line format\r\n\r\n" + va(12), false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newLimitEnv(t, 1)
			env.ResumesPending = true
			setup := NewSession(newLimitEnv(t, 0))
			setup.env.Store = env.Store
			if r := drive(t, setup, []byte("set foo 0 0 3\r\nabc\r\nset big 0 0 70000\r\n"+big+"\r\n")); r.out != "STORED\r\nSTORED\r\n" {
				t.Fatalf("setup: %q", abbrev(r.out))
			}
			s := limitSession(env)
			chunks := make([][]byte, len(c.in))
			for i, in := range c.in {
				chunks[i] = []byte(in)
			}
			r := drive(t, s, chunks...)
			if r.out != c.want || r.closed != c.closed {
				t.Errorf("got %q (closed %v), want %q (closed %v)", abbrev(r.out), r.closed, abbrev(c.want), c.closed)
			}
			if got := env.mem.stats(env.Settings).respOOM; got != c.respOOM {
				t.Errorf("response_obj_oom %d, want %d", got, c.respOOM)
			}
			s.Reset()
			checkIdle(t, env)
		})
	}
}

// A value cut by the output budget goes out over two calls: an error met
// in the second call must not cut the value's tail out of the stream
// (before, the tail went and SERVER_ERROR followed the value's first part,
// on a connection left open).
func TestConnMemErrorAfterValueAcrossCalls(t *testing.T) {
	env := newLimitEnv(t, 1)
	env.ResumesPending = true
	setup := NewSession(newLimitEnv(t, 0))
	setup.env.Store = env.Store
	huge := repeat("h", 1000000)
	if r := drive(t, setup, []byte("set foo 0 0 3\r\nabc\r\nset h 0 0 1000000\r\n"+huge+"\r\n")); r.out != "STORED\r\nSTORED\r\n" {
		t.Fatalf("setup: %q", abbrev(r.out))
	}
	s := limitSession(env)
	r := drive(t, s, []byte("get h h"+repeat(" foo", 14)+"\r\nmn\r\n"))
	value := "VALUE h 0 1000000\r\n" + huge + "\r\n"
	want := value + value + "SERVER_ERROR out of memory writing get response\r\nMN\r\n"
	if r.out != want || r.closed {
		t.Errorf("got %q (closed %v), want %q", abbrev(r.out), r.closed, abbrev(want))
	}
	s.Reset()
	checkIdle(t, env)
}

// checkIdle fails unless worker 0, its connections closed, holds only the
// one bundle memcached keeps (its open bundle), no objects and no read
// buffer.
func checkIdle(t *testing.T, env *Env) {
	t.Helper()
	m := &env.mem.shares[0]
	if m.inUse.Load() != 1 || m.bundles.Load() != 1 || m.objs.Load() != 0 {
		t.Errorf("after the close: %d blocks, %d bundles, %d objects held; want 1, 1, 0", m.inUse.Load(), m.bundles.Load(), m.objs.Load())
	}
}

// A worker's bundles are shared by its connections: 40 sets each waiting
// for its data take 40 read buffers and 4 bundles, which fit in 64 blocks
// (memcached 1.6.18 with -t 1 and -o read_buf_mem_limit=1 keeps all 40).
func TestConnMemBundlesShared(t *testing.T) {
	env := newLimitEnv(t, 1)
	env.Settings.Threads = 1
	sessions := make([]*Session, 40)
	for i := range sessions {
		s := limitSession(env)
		sessions[i] = s
		in := []byte("set k" + strconv.Itoa(i) + " 0 0 10\r\nabc")
		if _, out, st := s.Process(in, nil); st != NeedMore || len(out) != 0 {
			t.Fatalf("connection %d: %q, %v", i, out, st)
		}
	}
	m := &env.mem.shares[0]
	if m.inUse.Load() != 44 || m.bundles.Load() != 4 || m.objs.Load() != 40 {
		t.Errorf("40 waiting sets: %d blocks, %d bundles, %d objects; want 44, 4, 40", m.inUse.Load(), m.bundles.Load(), m.objs.Load())
	}
	for _, s := range sessions {
		s.Reset()
	}
	checkIdle(t, env)
}
