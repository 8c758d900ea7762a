package protocol

import (
	"encoding/binary"
	"testing"
)

// A binary request whose body length is 2 GiB or more gets memcached's
// error reply, and then its whole body is skipped: what follows the header
// is the body the client announced, never a request. memcached holds the
// length in a C int, skips nothing for it and runs those bytes as requests;
// gocached deliberately does not (README, deliberate differences).
func TestBinaryHugeBodyIsSkipped(t *testing.T) {
	for _, c := range []struct {
		name string
		head string
		want string // the reply before the skip
	}{
		{"set", binReq(opSet, "a", setExt(0, 0), "", 1, 0),
			"81 00 op=01 st=03 ext= key=\"\" val=\"Too large.\" opq=00000001 cas=0\n"},
		{"unknown opcode", binReq(0x50, "k", "ee", "", 1, 0),
			"81 00 op=50 st=81 ext= key=\"\" val=\"Unknown command\" opq=00000001 cas=0\n"},
		{"sasl without -S", binReq(opSASLAuth, "PLAIN", "", "", 1, 0),
			"81 00 op=21 st=81 ext= key=\"\" val=\"Unknown command\" opq=00000001 cas=0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			head := []byte(c.head)
			binary.BigEndian.PutUint32(head[8:12], 0x80000010)
			// A request where memcached would read one: it is body here.
			in := string(head) + binReq(opNoop, "", "", "", 2, 0)
			res := drive(t, NewSession(newStillEnv(t)), []byte(in))
			if got := describePackets(res.out, res.closed); got != c.want {
				t.Errorf("got:\n%swant:\n%s", got, c.want)
			}
		})
	}
}
