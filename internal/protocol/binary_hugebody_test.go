package protocol

import (
	"encoding/binary"
	"testing"
)

// A binary request whose body length is over 1 GiB gets "Invalid
// arguments" and the connection is closed, as memcached 1.6.42 on answers
// it (229cf41; 1.6.18 held the length in a C int and ran the body's bytes
// as requests). Nothing after the header is read: the NOOP never runs.
func TestBinaryHugeBodyIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		head string
		op   string
	}{
		{"set", binReq(opSet, "a", setExt(0, 0), "", 1, 0), "01"},
		{"unknown opcode", binReq(0x50, "k", "ee", "", 1, 0), "50"},
		{"sasl without -S", binReq(opSASLAuth, "PLAIN", "", "", 1, 0), "21"},
	} {
		t.Run(c.name, func(t *testing.T) {
			head := []byte(c.head)
			binary.BigEndian.PutUint32(head[8:12], 0x80000010)
			in := string(head) + binReq(opNoop, "", "", "", 2, 0)
			res := drive(t, NewSession(newStillEnv(t)), []byte(in))
			want := "81 00 op=" + c.op + " st=04 ext= key=\"\" val=\"Invalid arguments\" opq=00000001 cas=0\nclosed\n"
			if got := describePackets(res.out, res.closed); got != want {
				t.Errorf("got:\n%swant:\n%s", got, want)
			}
		})
	}
}
