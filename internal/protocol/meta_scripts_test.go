package protocol

import (
	"strings"
	"testing"
)

// metaScripts cover every meta command and flag of memcached 1.6.18's
// protocol.txt. Replies are memcached's with CAS uniques written "C" (see
// normalizeMeta); TestMetaScriptsAgainstMemcached re-checks them against the
// real binary, except the deliberate differences marked own.
var metaScripts = []script{
	{name: "mn", in: "mn\r\nmn with args ignored\r\n", want: "MN\r\nMN\r\n"},
	{name: "mg miss", in: "mg a\r\n", want: "EN\r\n"},
	{name: "mg miss k O", in: "mg a k O123 v\r\n", want: "EN ka O123\r\n"},
	{name: "mg q miss", in: "mg a q\r\nmg a q k\r\nmn\r\n", want: "MN\r\n"},
	{name: "mg q hit", in: "ms a 1\r\nx\r\nmg a q\r\nmg a q v\r\nmn\r\n", want: "HD\r\nHD\r\nVA 1\r\nx\r\nMN\r\n"},
	{name: "mg HD", in: "ms a 1\r\nx\r\nmg a\r\n", want: "HD\r\nHD\r\n"},
	{name: "mg v", in: "ms a 2\r\nhi\r\nmg a v\r\n", want: "HD\r\nVA 2\r\nhi\r\n"},
	{name: "mg s", in: "ms a 2\r\nhi\r\nmg a s\r\n", want: "HD\r\nHD s2\r\n"},
	{name: "mg f", in: "ms a 2 F4294967295\r\nhi\r\nmg a f\r\n", want: "HD\r\nHD f4294967295\r\n"},
	{name: "mg t", in: "ms a 2 T100\r\nhi\r\nmg a t\r\nms b 2\r\nhi\r\nmg b t\r\n", want: "HD\r\nHD t100\r\nHD\r\nHD t-1\r\n"},
	{name: "mg c", in: "ms a 2\r\nhi\r\nmg a c\r\n", want: "HD\r\nHD cC\r\n"},
	{name: "mg k", in: "ms a 2\r\nhi\r\nmg a k\r\n", want: "HD\r\nHD ka\r\n"},
	{name: "mg O", in: "ms a 2\r\nhi\r\nmg a Oabc v\r\n", want: "HD\r\nVA 2 Oabc\r\nhi\r\n"},
	{name: "mg flag order", in: "ms a 2 F3 T100\r\nhi\r\nmg a v Oz k t f s\r\nmg a s f t k Oz v\r\n", want: "HD\r\nVA 2 Oz ka t100 f3 s2\r\nhi\r\nVA 2 s2 f3 t100 ka Oz\r\nhi\r\n"},
	{name: "mg h", in: "ms a 2\r\nhi\r\nmg a h\r\nmg a h\r\n", want: "HD\r\nHD h0\r\nHD h1\r\n"},
	{name: "mg l", in: "ms a 2\r\nhi\r\nmg a l\r\n", want: "HD\r\nHD l0\r\n"},
	{name: "mg u", in: "ms a 2\r\nhi\r\nmg a u\r\nmg a h\r\n", want: "HD\r\nHD\r\nHD h0\r\n"},
	{name: "mg T", in: "ms a 2\r\nhi\r\nmg a T100 t\r\nmg a t\r\nmg a t T-1\r\nmg a\r\n", want: "HD\r\nHD t100\r\nHD t100\r\nHD t100\r\nEN\r\n"},
	{name: "mg N", in: "mg a N30 v t c\r\nmg a N30 v t\r\nms a 1\r\nx\r\nmg a v\r\n", want: "VA 0 t30 cC W\r\n\r\nVA 0 t30 Z\r\n\r\nHD\r\nVA 1\r\nx\r\n"},
	{name: "mg N q", in: "mg a N30 q\r\nmg a N30 q\r\nmn\r\n", want: "HD W\r\nHD Z\r\nMN\r\n"},
	{name: "mg R", in: "ms a 1 T10\r\nx\r\nmg a R30\r\nmg a R30\r\nmg a R5\r\n", want: "HD\r\nHD W\r\nHD Z\r\nHD Z\r\n"},
	{name: "mg R no ttl", in: "ms a 1\r\nx\r\nmg a R30\r\n", want: "HD\r\nHD\r\n"},
	{name: "mg X W Z", in: "ms a 1\r\nx\r\nmd a I\r\nmg a v\r\nmg a v\r\nmg a c\r\n", want: "HD\r\nHD\r\nVA 1 X W\r\nx\r\nVA 1 Z X\r\nx\r\nHD cC Z X\r\n"},
	{name: "mg b", in: "ms YWJj 3 b\r\nxyz\r\nmg YWJj b v k\r\nmg abc v k\r\nmg YWJj b k q\r\nmg eHl6 b k\r\n", want: "HD\r\nVA 3 kYWJj b\r\nxyz\r\nVA 3 kYWJj b\r\nxyz\r\nHD kYWJj b\r\nEN keHl6 b\r\n"},
	{name: "mg b bad", in: "mg YQ b\r\nmg YQ=== b\r\nmg ! b\r\n", want: "CLIENT_ERROR error decoding key\r\nCLIENT_ERROR error decoding key\r\nCLIENT_ERROR error decoding key\r\n"},
	{name: "mg P L", in: "ms a 1\r\nx\r\nmg a v Pfoo Lbar\r\n", want: "HD\r\nVA 1\r\nx\r\n"},
	{name: "mg errors", in: "mg\r\nmg a zz\r\nmg a v v\r\nmg a Tx\r\nmg a Nx\r\nmg a Rx\r\nmg a O123456789012345678901234567890123\r\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR duplicate flag\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR opaque token too long\r\n", since: "1.6.40"},
	{name: "mg too many flags", in: "mg a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\r\n", want: "CLIENT_ERROR invalid flag\r\n", since: "1.6.40"},
	{name: "ms", in: "ms a 2\r\nhi\r\nmg a v\r\n", want: "HD\r\nVA 2\r\nhi\r\n"},
	{name: "ms T F", in: "ms a 2 T100 F7\r\nhi\r\nmg a v t f\r\n", want: "HD\r\nVA 2 t100 f7\r\nhi\r\n"},
	{name: "ms c k O", in: "ms a 2 c k O1\r\nhi\r\n", want: "HD cC ka O1\r\n"},
	{name: "ms q", in: "ms a 2 q\r\nhi\r\nms a 2 q ME\r\nhi\r\nmn\r\n", want: "NS\r\nMN\r\n"},
	{name: "ms ME", in: "ms a 1 ME\r\nx\r\nms a 1 ME\r\ny\r\nmg a v\r\n", want: "HD\r\nNS\r\nVA 1\r\nx\r\n"},
	{name: "ms MR", in: "ms a 1 MR\r\nx\r\nms a 1\r\nx\r\nms a 1 MR\r\ny\r\nmg a v\r\n", want: "NS\r\nHD\r\nHD\r\nVA 1\r\ny\r\n"},
	{name: "ms MA MP", in: "ms a 1 MA\r\nx\r\nms a 1 F9 T0\r\nx\r\nms a 1 MA\r\ny\r\nms a 1 MP\r\nw\r\nmg a v f\r\n", want: "NS\r\nHD\r\nHD\r\nHD\r\nVA 3 f9\r\nwxy\r\n"},
	{name: "ms MS", in: "ms a 1 MS\r\nx\r\nmg a v\r\n", want: "HD\r\nVA 1\r\nx\r\n"},
	{name: "ms M errors", in: "ms a 1 MX\r\nx\r\nms a 1 M\r\nx\r\nms a 1 MSS\r\nx\r\nmg a v\r\n", want: "CLIENT_ERROR invalid mode for ms M token\r\nCLIENT_ERROR invalid mode for ms M token\r\nHD\r\nVA 1\r\nx\r\n", since: "1.6.40"},
	{name: "ms C", in: "ms a 1 C0\r\nx\r\nms a 1\r\nx\r\nms a 1 C99999999\r\ny\r\nms a 1 C0\r\ny\r\nmg a v\r\n", want: "NF\r\nHD\r\nEX\r\nEX\r\nVA 1\r\nx\r\n"},
	{name: "ms C append", in: "ms a 1\r\nx\r\nms a 1 MA C99999999\r\ny\r\nms a 1 MA C0\r\ny\r\nmg a v\r\n", want: "HD\r\nEX\r\nHD\r\nVA 2\r\nxy\r\n"},
	{name: "ms C add", in: "ms a 1\r\nx\r\nms a 1 ME C99999999\r\ny\r\nms b 1 ME C99999999\r\ny\r\nmg b v\r\n", want: "HD\r\nNS\r\nHD\r\nVA 1\r\ny\r\n"},
	{name: "ms I", in: "ms a 1\r\nx\r\nms a 1 I C99999999\r\ny\r\nmg a v\r\n", want: "HD\r\nEX\r\nVA 1\r\nx\r\n"},
	{name: "ms b", in: "ms AAEC 1 b k\r\nx\r\nmg AAEC b k v\r\n", want: "HD kAAEC b\r\nVA 1 kAAEC b\r\nx\r\n"},
	{name: "ms b bad", in: "ms a 1 b\r\nx\r\nmn\r\n", want: "CLIENT_ERROR error decoding key\r\nMN\r\n"},
	{name: "ms bad chunk", in: "ms a 2\r\nhiX\r\nmn\r\nms a 2 q\r\nhiX\r\nmn\r\n", want: "CLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad command line format\r\nMN\r\nCLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad command line format\r\nMN\r\n", since: "1.6.40"},
	{name: "ms empty", in: "ms a 0\r\n\r\nmg a v s\r\n", want: "HD\r\nVA 0 s0\r\n\r\n"},
	{name: "ms errors swallow", in: "ms a 2 Fx\r\nhi\r\nms a 2 Tx\r\nhi\r\nms a 2 zz\r\nhi\r\nms a 2 k k\r\nhi\r\nmn\r\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR duplicate flag\r\nMN\r\n"},
	{name: "md", in: "md a\r\nms a 1\r\nx\r\nmd a\r\nmg a\r\n", want: "NF\r\nHD\r\nHD\r\nEN\r\n"},
	{name: "md q", in: "md a q\r\nms a 1\r\nx\r\nmd a q\r\nmn\r\n", want: "NF\r\nHD\r\nMN\r\n"},
	{name: "md k O", in: "ms a 1\r\nx\r\nmd a k O5\r\nmd a k O6\r\n", want: "HD\r\nHD ka O5\r\nNF ka O6\r\n"},
	{name: "md C", in: "ms a 1\r\nx\r\nmd a C99999999\r\nmd a C0\r\nmg a v\r\n", want: "HD\r\nEX\r\nEX\r\nVA 1\r\nx\r\n"},
	{name: "md I T", in: "ms a 1\r\nx\r\nmd a I T30\r\nmg a v t\r\nmg a v t\r\n", want: "HD\r\nHD\r\nVA 1 t30 X W\r\nx\r\nVA 1 t30 Z X\r\nx\r\n"},
	{name: "md I q", in: "ms a 1\r\nx\r\nmd a I q\r\nmn\r\n", want: "HD\r\nMN\r\n"},
	{name: "md b", in: "ms YWJj 1 b\r\nx\r\nmd YWJj b k\r\nmg abc\r\n", want: "HD\r\nHD kYWJj b\r\nEN\r\n"},
	{name: "md errors", in: "md\r\nmd a zz\r\nmd a q q\r\nmd a Cx\r\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR duplicate flag\r\nCLIENT_ERROR bad token in command line format\r\n", since: "1.6.40"},
	{name: "ma", in: "ma a\r\nms a 1\r\n5\r\nma a\r\nmg a v\r\n", want: "NF\r\nHD\r\nHD\r\nVA 1\r\n6\r\n"},
	{name: "ma v", in: "ms a 1\r\n5\r\nma a v\r\n", want: "HD\r\nVA 1\r\n6\r\n"},
	{name: "ma D", in: "ms a 1\r\n5\r\nma a v D10\r\nma a v D18446744073709551615\r\n", want: "HD\r\nVA 2\r\n15\r\nVA 2\r\n14\r\n"},
	{name: "ma MD M- MI M+", in: "ms a 2\r\n10\r\nma a v MD\r\nma a v M- D3\r\nma a v MI D2\r\nma a v M+\r\nma a v MD D100\r\n", want: "HD\r\nVA 1\r\n9\r\nVA 1\r\n6\r\nVA 1\r\n8\r\nVA 1\r\n9\r\nVA 1\r\n0\r\n"},
	{name: "ma N J", in: "ma a N0 J42 v\r\nma a N0 J42 v\r\nma b N0 v\r\n", want: "VA 2\r\n42\r\nVA 2\r\n43\r\nVA 1\r\n0\r\n"},
	{name: "ma N q", in: "ma a N0 q\r\nma a q\r\nmn\r\n", want: "MN\r\n", since: "1.6.40"},
	{name: "ma q", in: "ms a 1\r\n5\r\nma a q\r\nma b q\r\nmn\r\n", want: "HD\r\nNF\r\nMN\r\n"},
	{name: "ma T t", in: "ma a N100 t v\r\nma a t T50 v\r\nmg a t\r\n", want: "VA 1 t100\r\n0\r\nVA 1 t100\r\n1\r\nHD t50\r\n"},
	{name: "ma c k O", in: "ms a 1\r\n5\r\nma a c k O1\r\nma b k O2\r\n", want: "HD\r\nHD cC ka O1\r\nNF kb O2\r\n"},
	{name: "ma C", in: "ms a 1\r\n5\r\nma a C99999999 v\r\nma a C0 v\r\n", want: "HD\r\nEX\r\nVA 1\r\n6\r\n"},
	{name: "ma b", in: "ms YWJj 1 b\r\n5\r\nma YWJj b k v\r\n", want: "HD\r\nVA 1 kYWJj b\r\n6\r\n"},
	{name: "ma non-numeric", in: "ms a 3\r\nabc\r\nma a\r\nms b 0\r\n\r\nma b\r\n", want: "HD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\nHD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
	{name: "ma errors", in: "ma\r\nma a MX\r\nma a Dx\r\nma a Jx\r\nma a M\r\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR invalid mode for ma M token\r\nCLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid mode for ma M token\r\n", since: "1.6.40"},
	{name: "ma grows", in: "ms a 2\r\n99\r\nma a v\r\nmg a v s\r\n", want: "HD\r\nVA 3\r\n100\r\nVA 3 s3\r\n100\r\n"},
	{name: "me", in: "me a\r\nms a 1 F5 T100\r\nx\r\nme a\r\nmg a\r\nme a\r\n", want: "EN\r\nHD\r\nME a exp=100 la=0 cas=C fetch=no cls=1 size=65\r\nHD\r\nME a exp=100 la=0 cas=C fetch=yes cls=1 size=65\r\n", since: "1.6.24"},
	{name: "me b", in: "ms AAEC 1 b\r\nx\r\nme AAEC b\r\nme AAEC\r\nme ! b\r\n", want: "HD\r\nEN\r\nEN\r\nEN\r\n", since: "1.6.40"},
	{name: "me errors", in: "me\r\n", want: "CLIENT_ERROR bad command line format\r\n"},
	{name: "mixed text", in: "set a 0 0 1\r\nx\r\nmg a v f s\r\nms a 1 F7\r\ny\r\nget a\r\n", want: "STORED\r\nVA 1 f0 s1\r\nx\r\nHD\r\nVALUE a 7 1\r\ny\r\nEND\r\n"},
	{name: "unknown m", in: "mx a\r\nm a\r\nmgg a\r\n", want: "ERROR\r\nERROR\r\nERROR\r\n"},

	// Deliberate differences: the data block of ms is never run as a command.
	// memcached rejects a key over 250 bytes, or a line of more than 19
	// tokens, before reading the datalen, then executes the data; gocached
	// swallows it.
	{name: "ms key 251 swallows", in: "ms " + k251 + " 9\r\nflush_all\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN"), own: true},
	{name: "ms too many tokens swallows", in: "ms a 9 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\r\nflush_all\r\nmn\r\n", want: "CLIENT_ERROR invalid flag\r\nMN\r\n", since: "1.6.40"},
	// Without a valid datalen nobody knows where the data ends: as
	// memcached, the error is sent (even with q), the connection stays open
	// and the next line is read as a command (metaget.t).
	{name: "ms no datalen", in: "ms a\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN")},
	{name: "ms no datalen quiet", in: "ms quiet q\r\nms quiet\r\nms quiet 2 q\r\nbo\r\nmg quiet v q\r\nmn\r\n",
		want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "VA 2", "bo", "MN")},
	{name: "ms bad datalen", in: "ms a S5\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN")},
	{name: "ms negative datalen", in: "ms a -1\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN")},
	// Control characters are part of a meta key too, as in memcached.
	{name: "meta control char key", in: "ms a\x01b 1\r\nx\r\nmg a\x01b v\r\nmd a\x01b\r\nma a\x01b\r\nms AQ== 1 b\r\nx\r\nmg AQ== b v\r\n",
		want: lines("HD", "VA 1", "x", "HD", "NF", "HD", "VA 1", "x")},
	// memcached finds an overlong opaque while writing the reply, after a T
	// or N before it took effect (metaopaque_test.go has more).
	{name: "mg opaque too long after T", in: "ms a 1\r\nx\r\nmg a T100 O123456789012345678901234567890123\r\nmg a t\r\n",
		want: lines("HD", "CLIENT_ERROR opaque token too long", "HD t100")},
}

// TestMetaExplicitCAS: the E flag (explicit CAS) comes from memcached
// 1.6.21, where 1.6.18 answers "CLIENT_ERROR invalid flag": an item that
// ms, ma, md I or a vivifying mg changes gets the client's CAS.
func TestMetaExplicitCAS(t *testing.T) {
	in := "ms a 1 E12345 c\r\n5\r\nmg a c\r\nma a E777 c\r\nmd a I E888\r\nmg a c v\r\n" +
		"mg b N0 E5 c\r\nms a 1 C888 E99 c\r\ny\r\nms a 1 Ex\r\nz\r\nmd a C99 E3\r\nmg a\r\nmn\r\n"
	want := lines("HD c12345", "HD c12345", "HD c777", "HD", "VA 1 c888 X W", "6", "HD c5 W", "HD c99",
		"CLIENT_ERROR bad token in command line format", "HD", "EN", "MN")
	if got := drive(t, NewSession(newStillEnv(t)), []byte(in)); got.out != want {
		t.Fatalf("got  %q\nwant %q", got.out, want)
	}
}

func checkMeta(t *testing.T, sc script, got result, how string) {
	t.Helper()
	if g := normalizeMeta(got.out); g != sc.want {
		t.Errorf("%s: %s\n got: %q\nwant: %q", sc.name, how, abbrev(g), abbrev(sc.want))
	}
	if got.closed != sc.closed {
		t.Errorf("%s: %s: closed = %v, want %v", sc.name, how, got.closed, sc.closed)
	}
}

func TestMetaScripts(t *testing.T) {
	for _, sc := range metaScripts {
		t.Run(sc.name, func(t *testing.T) {
			checkMeta(t, sc, drive(t, NewSession(newStillEnv(t)), []byte(sc.in)), "whole")
		})
	}
}

// TestMetaScriptsSplit feeds every meta script split at every byte, and one
// byte at a time: the replies must not change.
func TestMetaScriptsSplit(t *testing.T) {
	t.Parallel()
	for _, sc := range metaScripts {
		t.Run(sc.name, func(t *testing.T) {
			in := []byte(sc.in)
			for i := 1; i < len(in); i++ {
				checkMeta(t, sc, driveFresh(t, newStillEnv, in[:i], in[i:]), "split")
				if t.Failed() {
					t.Logf("split at %d", i)
					return
				}
			}
			chunks := make([][]byte, len(in))
			for i := range in {
				chunks[i] = in[i : i+1]
			}
			checkMeta(t, sc, driveFresh(t, newStillEnv, chunks...), "byte by byte")
		})
	}
}

// TestMetaPipelined runs every meta script that keeps the connection open
// back to back on one session, as one buffer, separated by flush_all.
func TestMetaPipelined(t *testing.T) {
	var in, want strings.Builder
	for _, sc := range metaScripts {
		if sc.closed {
			continue
		}
		in.WriteString(sc.in + "flush_all\r\n")
		want.WriteString(sc.want + "OK\r\n")
	}
	got := drive(t, NewSession(newStillEnv(t)), []byte(in.String()))
	if g := normalizeMeta(got.out); g != want.String() {
		t.Fatalf("pipelined meta scripts differ\n got: %q\nwant: %q", abbrev(g), abbrev(want.String()))
	}
}

func TestMetaScriptsAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, sc := range metaScripts {
		if sc.own || sc.since != "" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			checkMeta(t, sc, exchangeWant(t, addr, sc.in, len(sc.want), sc.closed), "memcached")
		})
	}
}
