package reactor

import (
	"errors"
	"testing"
)

// TestListenPrefixes: memcached's "proto[NAME]:" and "tag[NAME]:" -l
// prefixes, read as its server_sockets reads them, and its lines for the
// entries it refuses.
func TestListenPrefixes(t *testing.T) {
	for _, c := range []struct {
		listen, addr, proto, errLine string
	}{
		{"proto[ascii]:127.0.0.1", "127.0.0.1:5", "ascii", ""},
		{"proto[binary]:tag[ab]:127.0.0.1:9", "127.0.0.1:9", "binary", ""},
		{"proto[negotiating]:[::1]:9", "[::1]:9", "negotiating", ""},
		{"proto[bin]:127.0.0.1", "127.0.0.1:5", "binary", ""}, // strncmp over the name's length
		{"proto[]:127.0.0.1", "127.0.0.1:5", "ascii", ""},
		{"proto[zzz]:127.0.0.1", "127.0.0.1:5", "", ""}, // unknown: -B's
		{"tag[abcdefgh]:127.0.0.1", "127.0.0.1:5", "", ""},
		{"notls:proto[ascii]:127.0.0.1", "127.0.0.1:5", "ascii", ""},
		{"proto[proxy]:127.0.0.1", "", "", `Server not built with proxy: "proto[proxy"`},
		{"127.0.0.1,proto[proxy]:127.0.0.2", "", "", `Server not built with proxy: "127.0.0.1"`},
		{"proto[ascii:127.0.0.1", "", "", `Invalid protocol spec: "[ascii:127.0.0.1"`},
		{"tag[x:127.0.0.1", "", "", `Invalid tag in socket config: "[x:127.0.0.1"`},
		{"tag[abcdefghi]:127.0.0.1", "", "", `Listener tags must be between 1 and 8 characters: "abcdefghi"`},
		{"tag[]:127.0.0.1", "", "", `Listener tags must be between 1 and 8 characters: ""`},
	} {
		addrs, err := ParseListen(c.listen, 5)
		var spec *ListenSpecError
		switch {
		case c.errLine != "":
			if !errors.As(err, &spec) || spec.Line != c.errLine {
				t.Errorf("%q: error %v, want memcached's %q", c.listen, err, c.errLine)
			}
		case err != nil:
			t.Errorf("%q: %v", c.listen, err)
		default:
			last := addrs[len(addrs)-1]
			if last.String() != c.addr || last.Proto != c.proto {
				t.Errorf("%q: %s proto %q, want %s proto %q", c.listen, last, last.Proto, c.addr, c.proto)
			}
		}
	}
}
