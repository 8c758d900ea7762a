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
		if want := "<11 version\n>11 VERSION 1.6.18\n"; vlog.String() != want+want {
			t.Errorf("-B %v: -vv lines %q, want %q twice", b, vlog.String(), want)
		}
	}
}
