package protocol

import (
	"strings"
	"testing"
)

// A retrieval with a key over 250 bytes answers only the error, but, as in
// memcached, the keys before the bad one were fetched: counted, marked
// fetched and, for gat/gats, touched. Keys after it are not. (memcached also
// drops the unsent replies of earlier pipelined requests, which depends on
// timing and is not copied: the items are set up first.)
var badKeyFetchCases = []struct{ name, in, want string }{
	{"gat touches keys before", "gat -1 a " + key251 + "\r\nget a\r\n",
		lines("CLIENT_ERROR bad command line format", "END")},
	{"gats leaves keys after", "gats -1 " + key251 + " a\r\nget a\r\n",
		lines("CLIENT_ERROR bad command line format", "VALUE a 0 1", "x", "END")},
	{"get fetches keys before", "get a " + key251 + " b\r\nmg a h\r\nmg b h\r\n",
		lines("CLIENT_ERROR bad command line format", "HD h1", "HD h0")},
	{"gat new ttl", "gat 1000 a miss " + key251 + "\r\nmg a t\r\n",
		lines("CLIENT_ERROR bad command line format", "HD t1000")},
}

const badKeySetup = "set a 0 0 1\r\nx\r\nset b 0 0 1\r\ny\r\n"

var key251 = strings.Repeat("k", 251)

func TestRetrievalBadKeyFetchesKeysBefore(t *testing.T) {
	for _, tc := range badKeyFetchCases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(newStillEnv(t))
			drive(t, s, []byte(badKeySetup))
			if got := drive(t, s, []byte(tc.in)).out; got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRetrievalBadKeyAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range badKeyFetchCases {
		t.Run(tc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			exchange(t, addr, badKeySetup, len(lines("STORED", "STORED")))
			if got := exchange(t, addr, tc.in, len(tc.want)); got.out != tc.want {
				t.Fatalf("memcached: got %q\nwant %q", got.out, tc.want)
			}
		})
	}
}

// Prefix stats (stats detail) count the keys fetched before the bad one.
func TestRetrievalBadKeyPrefixStats(t *testing.T) {
	const setup = "stats detail on\r\nset p:a 0 0 1\r\nz\r\n"
	in := "get p:a p:b " + key251 + "\r\nstats detail dump\r\n"
	want := lines("CLIENT_ERROR bad command line format", "PREFIX p get 2 hit 1 set 1 del 0", "END")
	s := NewSession(newStillEnv(t))
	drive(t, s, []byte(setup))
	if got := drive(t, s, []byte(in)).out; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if testing.Short() {
		return
	}
	addr := startMemcached(t)
	exchange(t, addr, setup, len(lines("OK", "STORED")))
	if got := exchange(t, addr, in, len(want)); got.out != want {
		t.Fatalf("memcached: got %q\nwant %q", got.out, want)
	}
}
