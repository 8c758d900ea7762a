package protocol

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestBindings(t *testing.T) {
	noop := binReq(opNoop, "", "", "", 1, 0)
	noopReply := describePackets(string(appendBinHeader(nil, opNoop, 0, 0, 0, 0, [4]byte{0, 0, 0, 1}, 0)), false)
	cases := []struct {
		binding Binding
		in      string
		want    string // describePackets of the reply, or the text reply
		binary  bool
	}{
		{BindingAuto, noop, noopReply, true},
		{BindingAuto, "version\r\n", "VERSION 1.6.18\r\n", false},
		{BindingASCII, binReq(opVersion, "", "", "", 1, 0) + "\r\n", "ERROR\r\n", false},
		{BindingASCII, "version\r\n", "VERSION 1.6.18\r\n", false},
		{BindingBinary, noop, noopReply, true},
		// memcached closes a binary-only connection on a bad magic byte.
		{BindingBinary, "version\r\n" + strings.Repeat("-", 20), "closed\n", true},
	}
	for _, c := range cases {
		scoped(t, func(t testing.TB) {
			env := newStillEnv(t)
			env.Protocol = c.binding
			got := drive(t, NewSession(env), []byte(c.in))
			g := got.out
			if c.binary {
				g = describePackets(got.out, got.closed)
			}
			if g != c.want {
				t.Errorf("%v %q: got %q, want %q", c.binding, c.in, g, c.want)
			}
		})
	}
	for _, s := range []string{"ascii", "binary", "auto", "auto-negotiate"} {
		b, err := ParseBinding(s)
		if err != nil || (s != "auto" && b.String() != s) || (s == "auto" && b != BindingAuto) {
			t.Errorf("ParseBinding(%q) = %v, %v", s, b, err)
		}
	}
	if _, err := ParseBinding("udp"); err == nil {
		t.Error("ParseBinding accepted nonsense")
	}
}

// TestSASLImpliesBinary: with SASL on, a text client is not spoken to.
func TestSASLImpliesBinary(t *testing.T) {
	env := newSASLEnv(t)
	env.Protocol = BindingAuto
	got := drive(t, NewSession(env), []byte("stats\r\n"+strings.Repeat(" ", 30)))
	if !got.closed || got.out != "" {
		t.Fatalf("text on a SASL server: %+v", got)
	}
}

// TestNegotiationLogged: at debug level (-vv) the negotiated protocol is
// logged once per connection, as memcached's "Client using the binary
// protocol".
func TestNegotiationLogged(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	env := newStillEnv(t)
	drive(t, NewSession(env), []byte(binReq(opNoop, "", "", "", 1, 0)+binReq(opNoop, "", "", "", 2, 0)))
	drive(t, NewSession(env), []byte("version\r\nversion\r\n"))
	log := buf.String()
	if strings.Count(log, "client using the binary protocol") != 1 || strings.Count(log, "client using the ascii protocol") != 1 {
		t.Fatalf("log:\n%s", log)
	}
	buf.Reset()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	drive(t, NewSession(env), []byte("version\r\n"))
	if buf.Len() != 0 {
		t.Fatalf("logged below -vv: %s", buf.String())
	}
}
