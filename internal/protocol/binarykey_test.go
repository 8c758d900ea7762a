package protocol

import "testing"

// Which items keep a base64 (b) key for meta replies: an ms sets it; an ms
// append or prepend stores a new item built from the old one, which memcached
// leaves unmarked, so its key comes back raw.
var binaryKeyCases = []struct{ name, in, want string }{
	{"ms append", "set n1 0 0 1\r\nx\r\nms bjE= 1 b MA k\r\ny\r\nmg n1 k v\r\n",
		lines("STORED", "HD kbjE= b", "VA 2 kn1", "xy")},
	{"ms prepend", "ms bjE= 1 b\r\nx\r\nms bjE= 1 b MP\r\ny\r\nmg bjE= b k\r\n",
		lines("HD", "HD", "HD kn1")},
	{"ms set", "set n1 0 0 1\r\nx\r\nms bjE= 1 b\r\ny\r\nmg n1 k\r\n", lines("STORED", "HD", "HD kbjE= b")},
	{"text append", "ms bjE= 1 b\r\nx\r\nappend n1 0 0 1\r\ny\r\nmg n1 k\r\n", lines("HD", "STORED", "HD kn1")},
}

func TestMetaBinaryKeyKept(t *testing.T) {
	for _, tc := range binaryKeyCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runScript(t, tc.in).out; got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMetaBinaryKeyAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range binaryKeyCases {
		t.Run(tc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			if got := exchange(t, addr, tc.in, len(tc.want)); got.out != tc.want {
				t.Fatalf("memcached: got %q\nwant %q", got.out, tc.want)
			}
		})
	}
}
