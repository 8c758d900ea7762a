package protocol

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/sasldb"
)

// cyrusUsers is a fake sasldb: user -> realm -> password.
var cyrusUsers = map[string]map[string]string{
	"alice":    {"vm.example": "secret"},
	"bob":      {"vm.example": "pw"},
	"testuser": {"memcached.realm": "testpass"},
}

func cyrusSecret(user, realm string) ([]byte, error) {
	if pw, ok := cyrusUsers[user][realm]; ok {
		return []byte(pw), nil
	}
	return nil, sasldb.ErrNoUser
}

func newCyrusEnv(t *testing.T, mechs ...string) *Env {
	t.Helper()
	sasl, err := NewCyrusSASL(mechs, "vm.example", cyrusSecret)
	if err != nil {
		t.Fatal(err)
	}
	env := newStillEnv(t)
	env.SASL = sasl
	return env
}

// packets splits binary replies into (status, body) pairs.
func packets(t *testing.T, out string) [][2]string {
	t.Helper()
	var ps [][2]string
	for b := []byte(out); len(b) >= 24; {
		n := 24 + int(binary.BigEndian.Uint32(b[8:12]))
		if len(b) < n {
			t.Fatalf("truncated packet in %q", out)
		}
		ps = append(ps, [2]string{hex.EncodeToString(b[6:8]), string(b[24:n])})
		b = b[n:]
	}
	return ps
}

func TestNewCyrusSASL(t *testing.T) {
	for _, tc := range []struct {
		mechs []string
		want  string
	}{
		{nil, "SCRAM-SHA-512 SCRAM-SHA-384 SCRAM-SHA-256 SCRAM-SHA-224 SCRAM-SHA-1 CRAM-MD5 PLAIN LOGIN"},
		{[]string{"login", "plain"}, "LOGIN PLAIN"},
		{[]string{"PLAIN"}, "PLAIN"},
		{[]string{"plain", "cram-md5"}, "PLAIN CRAM-MD5"},
		{[]string{"DIGEST-MD5", "scram-sha-256", "CRAM-MD5", "PLAIN", "cram-md5"}, "SCRAM-SHA-256 CRAM-MD5 PLAIN"},
	} {
		c, err := NewCyrusSASL(tc.mechs, "h", cyrusSecret)
		if err != nil || c.Mechanisms() != tc.want {
			t.Errorf("mech_list %q: %q, %v; want %q", tc.mechs, c.Mechanisms(), err, tc.want)
		}
	}
	if _, err := NewCyrusSASL([]string{}, "h", cyrusSecret); err == nil {
		t.Error("an empty mech_list was accepted")
	}
	if _, err := NewCyrusSASL([]string{"DIGEST-MD5", "NTLM"}, "h", cyrusSecret); err == nil {
		t.Error("a mech_list of mechanisms gocached does not have was accepted")
	}
}

// TestCyrusPlain: user names as libsasl2 reads them: no realm means the
// server's hostname, "user@realm" splits at the first '@', an authzid is
// compared in canonical form.
func TestCyrusPlain(t *testing.T) {
	c, _ := NewCyrusSASL(nil, "vm.example", cyrusSecret)
	for _, tc := range []struct {
		msg string
		ok  bool
	}{
		{plain("", "alice", "secret"), true},
		{plain("", "alice@vm.example", "secret"), true},
		{plain("alice@vm.example", "alice", "secret"), true},
		{plain("alice", "alice@vm.example", "secret"), true},
		{plain("bob", "alice", "secret"), false},
		{plain("", "testuser@memcached.realm", "testpass"), true},
		{plain("", "testuser", "testpass"), false},
		{plain("", "testuser@memcached.realm@x", "testpass"), false},
		{plain("", " alice\t", "secret"), true}, // libsasl2 trims names
		{plain(" alice", "alice ", "secret"), true},
		{plain("", "alice", " secret"), false},
		{plain("", "alice", "secre"), false},
		{plain("", "alice", "secrets"), false},
		{plain("", "", "secret"), false},
		{plain("", "@vm.example", "secret"), false},
		{"\x00alice", false},
	} {
		if got := c.checkPlain([]byte(tc.msg)); got != tc.ok {
			t.Errorf("PLAIN %q: %v, want %v", tc.msg, got, tc.ok)
		}
	}
}

// TestCyrusCRAMMD5 runs the CRAM-MD5 exchange as a client does: the
// server's challenge in libsasl2's form, then "user hexdigest".
func TestCyrusCRAMMD5(t *testing.T) {
	env := newCyrusEnv(t, "CRAM-MD5", "PLAIN")
	challengeForm := regexp.MustCompile(`^<[0-9]+\.[0-9]+@vm\.example>$`)
	respond := func(user, pass, challenge string, upper bool, after string) string {
		mac := hmac.New(md5.New, []byte(pass))
		mac.Write([]byte(challenge))
		d := hex.EncodeToString(mac.Sum(nil))
		if upper {
			d = strings.ToUpper(d)
		}
		return user + " " + d + after
	}
	for _, tc := range []struct {
		name, user, pass string
		upper            bool
		after            string
		ok               bool
	}{
		{"right", "alice", "secret", false, "", true},
		{"with realm", "testuser@memcached.realm", "testpass", false, "", true},
		{"wrong password", "alice", "nope", false, "", false},
		{"upper-case digest", "alice", "secret", true, "", false},
		{"unknown user", "carol", "secret", false, "", false},
		// As libsasl2 reads the response: a trimmed name, a name ending at
		// a NUL, the digest's 32 characters whatever follows.
		{"name with spaces", " alice\t", "secret", false, "", true},
		{"NUL in the name", "alice\x00junk", "secret", false, "", true},
		{"bytes after the digest", "alice", "secret", false, "x\x00zz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(env)
			got := drive(t, s, []byte(binReq(opSASLList, "", "", "", 1, 0)+binReq(opSASLAuth, "cram-md5", "", "", 2, 0)))
			ps := packets(t, got.out)
			if len(ps) != 2 || ps[0] != [2]string{"0000", "CRAM-MD5 PLAIN"} || ps[1][0] != "0021" || !challengeForm.MatchString(ps[1][1]) {
				t.Fatalf("list and start: %q", ps)
			}
			got = drive(t, s, []byte(binReq(opSASLStep, "CRAM-MD5", "", respond(tc.user, tc.pass, ps[1][1], tc.upper, tc.after), 3, 0)+
				binReq(opNoop, "", "", "", 4, 0)))
			ps = packets(t, got.out)
			want := [][2]string{{"0000", "Authenticated"}, {"0000", ""}}
			if !tc.ok {
				want = [][2]string{{"0020", "Auth failure."}, {"0020", "Auth failure."}}
			}
			if len(ps) != 2 || ps[0] != want[0] || ps[1] != want[1] {
				t.Fatalf("step: %q, want %q", ps, want)
			}
		})
	}
	// Each start draws a new challenge; an initial response is refused, and
	// a step after a finished exchange fails.
	s := NewSession(env)
	a := packets(t, drive(t, s, []byte(binReq(opSASLAuth, "CRAM-MD5", "", "", 1, 0))).out)
	b := packets(t, drive(t, s, []byte(binReq(opSASLAuth, "CRAM-MD5", "", "", 1, 0))).out)
	if a[0][1] == b[0][1] {
		t.Errorf("the same challenge twice: %q", a[0][1])
	}
	c := packets(t, drive(t, NewSession(env), []byte(binReq(opSASLAuth, "CRAM-MD5", "", respond("alice", "secret", b[0][1], false, ""), 1, 0))).out)
	if c[0][0] != "0020" {
		t.Errorf("CRAM-MD5 with an initial response: %q", c)
	}
	s = NewSession(env)
	drive(t, s, []byte(binReq(opSASLAuth, "PLAIN", "", plain("", "alice", "secret"), 1, 0)))
	d := packets(t, drive(t, s, []byte(binReq(opSASLStep, "PLAIN", "", plain("", "alice", "secret"), 2, 0))).out)
	if d[0][0] != "0020" {
		t.Errorf("a step after a finished exchange: %q", d)
	}
}

// TestCyrusLogin: libsasl2's LOGIN, as memcached 1.6.18 relays it (replies
// recorded from it with mech_list "login plain"): "Username:" and
// "Password:" prompts, the user name possibly as the initial response, and
// a wrong password ending the exchange.
func TestCyrusLogin(t *testing.T) {
	env := newCyrusEnv(t, "LOGIN", "PLAIN")
	user := "testuser@memcached.realm"
	for _, tc := range []struct {
		name string
		in   string
		want [][2]string
	}{
		{"prompted", binReq(opSASLAuth, "LOGIN", "", "", 1, 0) + binReq(opSASLStep, "LOGIN", "", user, 2, 0) +
			binReq(opSASLStep, "LOGIN", "", "testpass", 3, 0) + binReq(opNoop, "", "", "", 4, 0),
			[][2]string{{"0021", "Username:"}, {"0021", "Password:"}, {"0000", "Authenticated"}, {"0000", ""}}},
		{"user as initial response", binReq(opSASLAuth, "login", "", user, 1, 0) + binReq(opSASLStep, "LOGIN", "", "testpass", 2, 0) +
			binReq(opNoop, "", "", "", 3, 0),
			[][2]string{{"0021", "Password:"}, {"0000", "Authenticated"}, {"0000", ""}}},
		{"wrong password", binReq(opSASLAuth, "LOGIN", "", user, 1, 0) + binReq(opSASLStep, "LOGIN", "", "wrong", 2, 0) +
			binReq(opSASLStep, "LOGIN", "", "testpass", 3, 0) + binReq(opNoop, "", "", "", 4, 0),
			[][2]string{{"0021", "Password:"}, {"0020", "Auth failure."}, {"0020", "Auth failure."}, {"0020", "Auth failure."}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := drive(t, NewSession(env), []byte(tc.in))
			ps := packets(t, got.out)
			if len(ps) != len(tc.want) {
				t.Fatalf("%q, want %q", ps, tc.want)
			}
			for i := range ps {
				if ps[i] != tc.want[i] {
					t.Fatalf("%q, want %q", ps, tc.want)
				}
			}
		})
	}
}

// cyrusFromSasldb is gocached's Cyrus SASL over the sasldb2 and
// memcached.conf in dir (as cyrusSetup writes them), in the hostname's realm.
func cyrusFromSasldb(t *testing.T, dir string) *SASL {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sasldb.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sasl, err := NewCyrusSASL(cfg.Mechanisms, host, cfg.Password)
	if err != nil {
		t.Fatal(err)
	}
	return sasl
}

// TestCyrusScriptsFromSasldb runs the recorded SASL scripts (memcached
// 1.6.18 with Cyrus SASL, mech_list plain) against gocached's Cyrus setup
// reading a sasldb2 that saslpasswd2 wrote, the way TestSASLAgainstMemcached
// sets memcached up.
func TestCyrusScriptsFromSasldb(t *testing.T) {
	dir := cyrusSetup(t)
	sasl := cyrusFromSasldb(t, dir)
	for _, sc := range saslScripts {
		t.Run(sc.name, func(t *testing.T) {
			env := newStillEnv(t)
			env.SASL = sasl
			got := drive(t, NewSession(env), []byte(sc.in))
			if g := describePackets(got.out, got.closed); g != saslWants[sc.name] {
				t.Errorf("got:\n%swant:\n%s", g, saslWants[sc.name])
			}
		})
	}
	cfg, err := sasldb.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Password("alice", "elsewhere"); !errors.Is(err, sasldb.ErrNoUser) {
		t.Errorf("alice in another realm: %v", err)
	}
}
