package protocol

import (
	"bytes"
	"testing"
)

// TestDatagramIgnoresBinding: a Session serving UDP datagrams reads each
// by its first byte whatever -B says, keeps doing so across Reset (called
// after every datagram), and logs -vv lines under the socket's id with no
// connection opened, negotiated or closed.
func TestDatagramIgnoresBinding(t *testing.T) {
	noop := binReq(opNoop, "", "", "", 1, 0)
	noopReply := describePackets(string(appendBinHeader(nil, opNoop, 0, 0, 0, 0, [4]byte{0, 0, 0, 1}, 0)), false)
	for _, b := range []Binding{BindingAuto, BindingASCII, BindingBinary} {
		env := newStillEnv(t)
		env.Protocol = b
		var vlog bytes.Buffer
		env.VerboseLog = &vlog
		env.Settings.Verbosity.Store(2)
		s := NewSession(env)
		s.Datagram(11)
		for round := range 2 { // a second datagram after Reset
			if got := drive(t, s, []byte(noop)); describePackets(got.out, got.closed) != noopReply {
				t.Errorf("-B %v round %d: binary noop got %q", b, round, describePackets(got.out, got.closed))
			}
			s.Reset()
			if got := drive(t, s, []byte("version\r\n")); got.out != "VERSION 1.6.18\r\n" || got.closed {
				t.Errorf("-B %v round %d: text version got %+v", b, round, got)
			}
			s.Reset()
		}
		// The binary noop's header dumps name the UDP socket too, as
		// memcached's do.
		want := "<11 Read binary protocol data:\n" +
			"<11    0x80 0x0a 0x00 0x00\n<11    0x00 0x00 0x00 0x00\n<11    0x00 0x00 0x00 0x00\n" +
			"<11    0x00 0x00 0x00 0x01\n<11    0x00 0x00 0x00 0x00\n<11    0x00 0x00 0x00 0x00\n" +
			">11 Writing bin response:\n" +
			">11   0x81 0x0a 0x00 0x00\n>11   0x00 0x00 0x00 0x00\n>11   0x00 0x00 0x00 0x00\n" +
			">11   0x00 0x00 0x00 0x01\n>11   0x00 0x00 0x00 0x00\n>11   0x00 0x00 0x00 0x00\n" +
			"<11 version\n>11 VERSION 1.6.18\n"
		if vlog.String() != want+want {
			t.Errorf("-B %v: -vv lines %q, want %q twice", b, vlog.String(), want)
		}
	}
}

// TestDatagramLongLines: memcached reads a datagram whole, so a command line
// over MaxLineLen always has its newline in the same read and is served,
// whatever the command; on a stream the same line closes the connection.
// A datagram whose long line has no newline is dropped, as before.
func TestDatagramLongLines(t *testing.T) {
	long := func(n int) string { return string(bytes.Repeat([]byte("k"), n)) }
	for _, tc := range []struct {
		name, in, want string
		closed         bool
	}{
		{"delete, key too long", "delete " + long(3000) + "\r\n", "CLIENT_ERROR bad command line format\r\n", false},
		{"unknown command", long(3000) + "\r\n", "ERROR\r\n", false},
		{"mn with junk", "mn " + long(3000) + "\r\nmn\r\n", "MN\r\nMN\r\n", false},
		// The data block is swallowed, not run (memcached: ERROR).
		{"set, key too long, then its data", "set " + long(3000) + " 0 0 1\r\nx\r\nmn\r\n", "CLIENT_ERROR bad command line format\r\nMN\r\n", false},
		{"no newline", "delete " + long(3000), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(newStillEnv(t))
			s.Datagram(7)
			if got := drive(t, s, []byte(tc.in)); got.out != tc.want || got.closed != tc.closed {
				t.Errorf("datagram got %q closed=%v, want %q closed=%v", got.out, got.closed, tc.want, tc.closed)
			}
			stream := NewSession(newStillEnv(t))
			if got := drive(t, stream, []byte(tc.in)); got.out != "" || !got.closed {
				t.Errorf("stream got %q closed=%v, want a silent close", got.out, got.closed)
			}
		})
	}
}

// TestDatagramStreamCommands: memcached hands a connection that asks for a
// metadump or a watch to its crawler or logger thread, which write straight
// to the socket; a UDP socket has no peer to write to, so a datagram asking
// for one gets nothing for it and the rest of the datagram is dropped,
// while the replies before it still go out. Since memcached 1.6.40 a get
// before it leaves its replies unflushed, so the dump or watch is refused
// as pipelined and the rest of the datagram is served. gocached answered such a
// datagram with the whole dump, up to UDPReplyMax of key names for a
// 30-byte request whose source anyone can forge, and with "OK" to a watch.
func TestDatagramStreamCommands(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"lru_crawler metadump all\r\n", ""},
		{"lru_crawler metadump 1\r\nget k\r\n", ""},
		{"get k\r\nlru_crawler metadump all\r\nget k\r\n",
			"VALUE k 0 1\r\n5\r\nEND\r\nERROR cannot pipeline other commands before metadump\r\nVALUE k 0 1\r\n5\r\nEND\r\n"},
		{"lru_crawler metadump 99\r\n", "BADCLASS invalid class id\r\n"},
		{"watch\r\nget k\r\n", ""},
		{"get k\r\nwatch fetchers\r\n", "VALUE k 0 1\r\n5\r\nEND\r\nERROR cannot pipeline other commands before watch\r\n"},
		{"watch bogus\r\nget k\r\n", "ERROR\r\nVALUE k 0 1\r\n5\r\nEND\r\n"},
	} {
		scoped(t, func(t testing.TB) {
			env := newStillEnv(t)
			env.ResumesPending = true
			drive(t, NewSession(env), []byte("set k 0 0 1\r\n5\r\n"))
			s := NewSession(env)
			s.Datagram(11)
			got := drive(t, s, []byte(tc.in))
			if got.out != tc.want {
				t.Errorf("%q: got %q, want %q", tc.in, got.out, tc.want)
			}
			s.Reset()
			if env.crawlerBusy.Load() {
				t.Errorf("%q: the crawler is still busy after the datagram", tc.in)
			}
			if n := env.logs.count(); n != 0 {
				t.Errorf("%q: %d watchers left after the datagram", tc.in, n)
			}
			// The next datagram on the socket is served as usual.
			if got := drive(t, s, []byte("get k\r\n")); got.out != "VALUE k 0 1\r\n5\r\nEND\r\n" {
				t.Errorf("%q: next datagram got %q", tc.in, got.out)
			}
			s.Reset()
		})
	}
}
