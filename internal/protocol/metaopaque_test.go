package protocol

import (
	"strings"
	"testing"
)

// An opaque over 32 bytes: ms answers a bad mode first; ma and mg find it
// only while writing their reply, after the arithmetic, an autovivify and
// the flags before it took effect (those after it do not), and answer the
// error even under q; md checks it before doing anything.
var longOpaqueCases = []struct{ name, in, want string }{
	{"ms bad mode first", "ms a 1 O" + opaque33 + " MX\r\nx\r\nmg a\r\n",
		lines("CLIENT_ERROR invalid mode for ms M token", "EN")},
	{"ms not stored", "ms a 1 MS O" + opaque33 + "\r\nx\r\nmg a\r\n",
		lines("CLIENT_ERROR opaque token too long", "EN")},
	{"ma bad mode first", "set n 0 0 1\r\n5\r\nma n O" + opaque33 + " MX\r\n",
		lines("STORED", "CLIENT_ERROR invalid mode for ma M token")},
	{"ma non-numeric first", "set s 0 0 1\r\nx\r\nma s O" + opaque33 + "\r\n",
		lines("STORED", "CLIENT_ERROR cannot increment or decrement non-numeric value")},
	{"ma applied", "set n 0 0 1\r\n5\r\nma n q O" + opaque33 + "\r\nget n\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "VALUE n 0 1", "6", "END")},
	{"ma miss", "ma m O" + opaque33 + "\r\nmg m\r\n", lines("CLIENT_ERROR opaque token too long", "EN")},
	{"ma vivified", "ma m N0 J7 O" + opaque33 + "\r\nmg m v\r\n",
		lines("CLIENT_ERROR opaque token too long", "VA 1", "7")},
	{"mg miss under q", "mg a q O" + opaque33 + "\r\nmn\r\n", lines("CLIENT_ERROR opaque token too long", "MN")},
	{"mg vivified", "mg b N0 O" + opaque33 + " q\r\nmg b v\r\n",
		lines("CLIENT_ERROR opaque token too long", "VA 0", "")},
	{"mg T before", "set a 0 0 1\r\nx\r\nmg a T-1 O" + opaque33 + "\r\nget a\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "END")},
	{"mg T after", "set a 0 0 1\r\nx\r\nmg a O" + opaque33 + " T-1\r\nget a\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "VALUE a 0 1", "x", "END")},
	{"mg fetched", "set a 0 0 1\r\nx\r\nmg a v O" + opaque33 + "\r\nmg a h\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "HD h1")},
	{"mg locked not fetched", "set a 0 0 1\r\nx\r\nmg a l O" + opaque33 + "\r\nmg a h\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "HD h0")},
	{"md first", "set a 0 0 1\r\nx\r\nmd a O" + opaque33 + "\r\nmg a\r\n",
		lines("STORED", "CLIENT_ERROR opaque token too long", "HD")},
}

var opaque33 = strings.Repeat("o", 33)

func TestMetaLongOpaque(t *testing.T) {
	for _, tc := range longOpaqueCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runScript(t, tc.in).out; got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMetaLongOpaqueAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range longOpaqueCases {
		t.Run(tc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			if got := exchange(t, addr, tc.in, len(tc.want)); got.out != tc.want {
				t.Fatalf("memcached: got %q\nwant %q", got.out, tc.want)
			}
		})
	}
}
