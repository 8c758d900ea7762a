package protocol

import (
	"strconv"
	"testing"
)

// An mg or ma that sets a TTL in the past and asks for t gets memcached's
// unsigned 32-bit difference on its relative clock (current_time is
// now - process_started, process_started 62 s before the start): a past
// before process_started, or a negative TTL, counts as relative time 1.
func TestMetaTTLInThePast(t *testing.T) {
	const sinceStart = 1000
	current := int64(sinceStart + processStartedSlack)
	before := strconv.FormatInt(1<<32+1-current, 10) // relative time 1
	for _, tc := range []struct{ name, in, want string }{
		{"mg T-1", "set a 0 0 1\r\nx\r\nmg a T-1 t\r\n", lines("STORED", "HD t"+before)},
		{"mg t T-1", "set a 0 0 1\r\nx\r\nmg a t T-1\r\nmg a\r\n", lines("STORED", "HD t-1", "EN")},
		{"mg absolute past", "set a 0 0 1\r\nx\r\nmg a T2592001 t v\r\n", lines("STORED", "VA 1 t"+before, "x")},
		{"mg N-1 vivify", "mg b N-1 t\r\n", lines("HD t" + before + " W")},
		{"mg N absolute past", "mg b N2592001 t s\r\n", lines("HD t" + before + " s0 W")},
		{"ma N-1 vivify", "ma n N-1 t v\r\n", lines("VA 1 t"+before, "0")},
		{"ma no expiry", "set n 0 0 1\r\n5\r\nma n t\r\n", lines("STORED", "HD t-1")},
		{"mg future", "set a 0 1000 1\r\nx\r\nmg a t\r\nmg a T2000 t\r\n", lines("STORED", "HD t1000", "HD t2000")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newStillEnv(t)
			env.StartUnix = env.Store.Now() - sinceStart
			if got := drive(t, NewSession(env), []byte(tc.in)).out; got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Since seconds before process_started, as in memcached, an absolute TTL in
// the past but after memcached's start counts from its real time.
func TestMetaTTLPastSinceStart(t *testing.T) {
	env := newStillEnv(t)
	now := env.Store.Now()
	env.StartUnix = now - 1000
	in := "set a 0 0 1\r\nx\r\nmg a T" + strconv.FormatInt(now-5, 10) + " t\r\n"
	want := lines("STORED", "HD t"+strconv.FormatInt(1<<32-5, 10))
	if got := drive(t, NewSession(env), []byte(in)).out; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// mg R compares the item's expiry with the recache time on memcached's
// relative clock: every time before memcached's start is 1, so an item
// given a past TTL is not "sooner" than a past recache time.
var recachePastCases = []struct{ name, in, want string }{
	{"both past", "set a 0 0 1\r\nx\r\nmg a T2592001 R5000000\r\n", lines("STORED", "HD")},
	{"past ttl, future recache", "set a 0 0 1\r\nx\r\nmg a T2592001 R30\r\n", lines("STORED", "HD W")},
	{"negative ttl, past recache", "set a 0 0 1\r\nx\r\nmg a T-1 R2592001\r\n", lines("STORED", "HD")},
	{"far ttl, past recache", "set a 0 1000 1\r\nx\r\nmg a R5000000\r\n", lines("STORED", "HD")},
}

func TestMetaRecachePast(t *testing.T) {
	for _, tc := range recachePastCases {
		t.Run(tc.name, func(t *testing.T) {
			env := newStillEnv(t)
			env.StartUnix = env.Store.Now() - 1000
			if got := drive(t, NewSession(env), []byte(tc.in)).out; got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMetaRecachePastAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range recachePastCases {
		t.Run(tc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			if got := exchange(t, addr, tc.in, len(tc.want)); got.out != tc.want {
				t.Fatalf("memcached: got %q\nwant %q", got.out, tc.want)
			}
		})
	}
}
