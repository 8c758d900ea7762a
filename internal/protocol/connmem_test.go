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
		{"gets flush: they do not stack", repeat("get foo\r\n", 100), repeat("END\r\n", 100), false, 0},
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
	if m := &env.mem.shares[0]; m.inUse.Load() != 0 || m.objs.Load() != 0 {
		t.Errorf("after both closed: %d blocks, %d objects held", m.inUse.Load(), m.objs.Load())
	}
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
