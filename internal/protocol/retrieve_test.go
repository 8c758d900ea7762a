package protocol

import (
	"strconv"
	"strings"
	"testing"
)

// get lines past the multiget bound (-I, 1 MiB here), served as they
// arrive (retrieve_open.go). All but the last are memcached's replies,
// checked against it with the other scripts.
func init() { scripts = append(scripts, openLineScripts...) }

// manyKeys is n distinct keys of about 12 bytes, each followed by a space.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("missing-" + strconv.Itoa(i) + " ")
	}
	return b.String()
}

var longKeys = manyKeys(90000) // about 1.3 MB

var openLineScripts = []script{
	{name: "long multiget", in: "set a 0 0 1\r\nx\r\nset b 5 0 2\r\nyy\r\nget a " + longKeys + "b a\r\nversion\r\n",
		want: lines("STORED", "STORED", "VALUE a 0 1", "x", "VALUE b 5 2", "yy", "VALUE a 0 1", "x", "END", "VERSION 1.6.18")},
	{name: "long gets", in: "set a 0 0 1\r\nx\r\ngets " + longKeys + "a\r\n",
		want: lines("STORED", "VALUE a 0 1 C", "x", "END")},
	// memcached closes a long gat line; gocached reads it up to the bound.
	{name: "long gat", in: "gat 100 " + longKeys + "a\r\nversion\r\n", want: lines("CLIENT_ERROR line too long"), closed: true, own: true},
	{name: "long get bad key first", in: "set a 0 0 1\r\nx\r\nget " + k251 + " a " + longKeys + "\r\nversion\r\n",
		want: lines("STORED", "CLIENT_ERROR bad command line format", "", "VERSION 1.6.18"), since: "1.6.40"},
	{name: "long get no keys", in: "get" + strings.Repeat(" ", 1100000) + "\r\nversion\r\n", want: "CLIENT_ERROR bad command line format\r\nVERSION 1.6.18\r\n", since: "1.6.40"},
	{name: "long get NUL ends it", in: "set a 0 0 1\r\nx\r\nget " + longKeys + "a\x00 a a\r\nversion\r\n",
		want: lines("STORED", "VALUE a 0 1", "x", "END", "VERSION 1.6.18")},
	// A noreply of the command before must not silence the line's reply.
	{name: "long get after noreply", in: "set a 0 0 1 noreply\r\nx\r\nget" + strings.Repeat(" ", 1100000) + "\r\nversion\r\n", want: "CLIENT_ERROR bad command line format\r\nVERSION 1.6.18\r\n", since: "1.6.40"},
	// memcached sees the whole line before it answers, so it drops the
	// values gathered before the bad key; here they have gone out already.
	{name: "long get bad key after values", in: "set a 0 0 1\r\nx\r\nget a " + longKeys + k251 + " a\r\nversion\r\n",
		want: lines("STORED", "VALUE a 0 1", "x", "CLIENT_ERROR bad command line format", "", "VERSION 1.6.18"), own: true},
}

// TestOpenLineKeyBeforeCRLF: a 250-byte key ending an open line is whole
// however the reads cut it, the one that ends at its '\r' included (the
// '\r' is the line's, not the key's).
func TestOpenLineKeyBeforeCRLF(t *testing.T) {
	k250 := strings.Repeat("k", 250)
	line := "get " + longKeys + k250 + "\r\n"
	keyAt := len(line) - 252
	for _, cuts := range [][]int{{keyAt + 100, len(line) - 1}, {keyAt, len(line) - 1}, {len(line) - 1}} {
		s := NewSession(newSmallEnv(t))
		drive(t, s, []byte("set "+k250+" 0 0 1\r\nx\r\n"))
		var chunks [][]byte
		from := 0
		for _, c := range cuts {
			chunks = append(chunks, []byte(line[from:c]))
			from = c
		}
		chunks = append(chunks, []byte(line[from:]+"version\r\n"))
		want := "VALUE " + k250 + " 0 1\r\nx\r\nEND\r\nVERSION 1.6.18\r\n"
		if got := drive(t, s, chunks...); got.out != want {
			t.Errorf("reads cut at %v: %q, want %q", cuts, abbrev(got.out), want)
		}
	}
}

// A retrieval with a key over 250 bytes answers only the error, but, as in
// memcached, the keys before the bad one were fetched: counted, marked
// fetched and, for gat/gats, touched. Keys after it are not. (memcached also
// drops the unsent replies of earlier pipelined requests, which depends on
// timing and is not copied: the items are set up first.)
var badKeyFetchCases = []struct{ name, in, want string }{
	{"gat touches keys before", "gat -1 a " + key251 + "\r\nget a\r\n",
		lines("CLIENT_ERROR bad command line format", "", "END")},
	{"gats leaves keys after", "gats -1 " + key251 + " a\r\nget a\r\n",
		lines("CLIENT_ERROR bad command line format", "", "VALUE a 0 1", "x", "END")},
	{"get fetches keys before", "get a " + key251 + " b\r\nmg a h\r\nmg b h\r\n",
		lines("CLIENT_ERROR bad command line format", "", "HD h1", "HD h0")},
	{"gat new ttl", "gat 1000 a miss " + key251 + "\r\nmg a t\r\n",
		lines("CLIENT_ERROR bad command line format", "", "HD t1000")},
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
	addr := startRefMemcached(t) // the replies are 1.6.45's
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
	want := lines("CLIENT_ERROR bad command line format", "", "PREFIX p get 2 hit 1 set 1 del 0", "END")
	s := NewSession(newStillEnv(t))
	drive(t, s, []byte(setup))
	if got := drive(t, s, []byte(in)).out; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if testing.Short() {
		return
	}
	addr := startRefMemcached(t) // the replies are 1.6.45's
	exchange(t, addr, setup, len(lines("OK", "STORED")))
	if got := exchange(t, addr, in, len(want)); got.out != want {
		t.Fatalf("memcached: got %q\nwant %q", got.out, want)
	}
}
