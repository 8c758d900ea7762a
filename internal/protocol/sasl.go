package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gocached/gocached/internal/sasldb"
	"github.com/xdg-go/scram"
)

// SASL authentication for binary-protocol clients, as memcached does it
// with -S, in one of two setups:
//
//   - Cyrus SASL's own (what Debian's memcached, built without a password
//     file option, always uses): the mechanisms of mech_list, of which
//     gocached has the SCRAMs (sasl_scram.go), CRAM-MD5 and PLAIN, with each
//     user's password looked up
//     by Secret (cmd/gocached reads saslpasswd2's sasldb2 through
//     internal/sasldb). A user named without "@realm" is in the server's
//     hostname realm, as libsasl2 puts it.
//   - memcached's MEMCACHED_SASL_PWDB file of "user:password" lines, for
//     PLAIN only, read at every attempt like memcached's password check so
//     that editing it takes effect without a restart.

const (
	saslMaxMechLen = 32 // memcached's MAX_SASL_MECH_LEN
	// saslMaxData bounds the data of one SASL message: PLAIN's three
	// fields, a SCRAM message or a CRAM-MD5 digest take well under 2 KiB.
	saslMaxData  = 16 << 10
	saslMaxEntry = 256 // memcached reads password lines in buffers this long
	saslAuthOK   = "Authenticated"
	saslPlain    = "PLAIN"
	saslCRAMMD5  = "CRAM-MD5"
	saslLogin    = "LOGIN"
)

// SASLPasswordEnv is the environment variable memcached reads the password
// file's path from.
const SASLPasswordEnv = "MEMCACHED_SASL_PWDB"

// SASL is the -S configuration.
type SASL struct {
	// PasswordFile is memcached's MEMCACHED_SASL_PWDB file; "" in the
	// Cyrus setup.
	PasswordFile string
	// Secret returns a user's password in a realm (the Cyrus setup).
	Secret func(user, realm string) ([]byte, error)
	// Hostname is the server's realm and CRAM-MD5's challenge domain.
	Hostname string

	mechs    []string // offered, in order
	mechList []byte   // the SASL_LIST_MECHS reply
	// random fills challenges, nonces and salts; nil is crypto/rand (tests
	// make it repeatable, so that replies can be compared).
	random func([]byte)
}

func (c *SASL) fillRandom(b []byte) {
	if c.random != nil {
		c.random(b)
		return
	}
	rand.Read(b)
}

// NewSASL checks that the password file can be read and returns the
// MEMCACHED_SASL_PWDB configuration to put in Env.SASL: PLAIN only.
func NewSASL(passwordFile string) (*SASL, error) {
	f, err := os.Open(passwordFile)
	if err != nil {
		return nil, fmt.Errorf("sasl password file: %w", err)
	}
	f.Close()
	c := &SASL{PasswordFile: passwordFile}
	c.offer([]string{saslPlain})
	return c, nil
}

// NewCyrusSASL is the Cyrus setup: mechs is mech_list (nil: every
// mechanism gocached has, strongest first, as libsasl2 lists them: the
// SCRAMs, CRAM-MD5, PLAIN, LOGIN); names gocached does not have are left
// out, and none left is an error.
func NewCyrusSASL(mechs []string, hostname string, secret func(user, realm string) ([]byte, error)) (*SASL, error) {
	known := []string{}
	for _, h := range scramHashes {
		known = append(known, h.name)
	}
	known = append(known, saslCRAMMD5, saslPlain, saslLogin)
	if mechs == nil {
		mechs = known
	}
	var have []string
	for _, m := range mechs {
		if m = strings.ToUpper(m); slices.Contains(known, m) && !slices.Contains(have, m) {
			have = append(have, m)
		}
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("mech_list %q names no mechanism gocached has (%s)", strings.Join(mechs, " "), strings.Join(known, " "))
	}
	c := &SASL{Secret: secret, Hostname: hostname}
	c.offer(have)
	return c, nil
}

func (c *SASL) offer(mechs []string) {
	c.mechs = mechs
	c.mechList = []byte(strings.Join(mechs, " "))
}

// Mechanisms is the SASL_LIST_MECHS reply.
func (c *SASL) Mechanisms() string { return string(c.mechList) }

// mechanism returns the offered mechanism mech names (case aside), or "".
func (c *SASL) mechanism(mech []byte) string {
	for _, m := range c.mechs {
		if strings.EqualFold(m, string(mech)) {
			return m
		}
	}
	return ""
}

// checkPassword reports whether user and pass match a line of the file:
// "user:pass", optionally followed by ":" and more fields. As in memcached,
// the first line naming the user decides, and an unreadable file or an
// overlong entry refuses everyone.
func (c *SASL) checkPassword(user, pass []byte) bool {
	if len(user)+len(pass) > saslMaxEntry-4 || len(user) == 0 {
		return false
	}
	f, err := os.Open(c.PasswordFile)
	if err != nil {
		return false
	}
	defer f.Close()
	// The whole file, compared in constant time (memcached 1.6.42's fix of
	// a timing leak): how long a refusal takes says nothing of the users.
	return sasldb.MatchPasswordFile(f, user, pass)
}

// checkPlain verifies a PLAIN message: [authzid] NUL authcid NUL password.
// An authorization identity other than the user's own is refused, there
// being no rule that would allow it.
func (c *SASL) checkPlain(msg []byte) bool {
	parts := bytes.SplitN(msg, []byte{0}, 3)
	if len(parts) != 3 {
		return false
	}
	authz, user, pass := parts[0], parts[1], parts[2]
	if c.Secret == nil {
		if len(authz) > 0 && !bytes.Equal(authz, user) {
			return false
		}
		return c.checkPassword(user, pass)
	}
	if len(authz) > 0 && c.canonical(authz) != c.canonical(user) {
		return false
	}
	secret, ok := c.secret(user)
	return ok && subtle.ConstantTimeCompare(secret, pass) == 1
}

// canonical is libsasl2's form of a user name: surrounding whitespace
// trimmed, then user@realm, the realm being the server's hostname when the
// name has none.
func (c *SASL) canonical(user []byte) string {
	u := cTrimSpace(user)
	if bytes.IndexByte(u, '@') >= 0 {
		return string(u)
	}
	return string(u) + "@" + c.Hostname
}

// cTrimSpace trims what C's isspace calls whitespace, as libsasl2's
// canonicalisation does.
func cTrimSpace(b []byte) []byte { return bytes.Trim(b, " \t\n\v\f\r") }

// secret looks up the password of a user named "user" or "user@realm"
// (libsasl2 trims the name and splits it at the first '@').
func (c *SASL) secret(name []byte) ([]byte, bool) {
	user, realm, found := strings.Cut(string(cTrimSpace(name)), "@")
	if !found {
		realm = c.Hostname
	}
	if user == "" {
		return nil, false
	}
	pw, err := c.Secret(user, realm)
	return pw, err == nil
}

// cramChallenge appends a fresh CRAM-MD5 challenge to dst in libsasl2's
// form, <random.time@hostname>, the random part from crypto/rand: a
// predictable challenge would let a recorded response be replayed.
func (c *SASL) cramChallenge(dst []byte, now int64) []byte {
	var r [4]byte
	c.fillRandom(r[:])
	return fmt.Appendf(dst, "<%d.%d@%s>", binary.BigEndian.Uint32(r[:]), now, c.Hostname)
}

// checkCRAM verifies a CRAM-MD5 response to challenge: the user name, a
// space, and HMAC-MD5 of the challenge keyed with the password in lower
// hex. As libsasl2 reads it: the last space separates them, the name ends
// at a NUL (a C string), and the 32 digest characters are compared with
// its own lower-case hex, whatever follows them.
func (c *SASL) checkCRAM(challenge, resp []byte) bool {
	sp := bytes.LastIndexByte(resp, ' ')
	if sp < 0 || len(resp)-sp-1 < 2*md5.Size {
		return false
	}
	name := resp[:sp]
	if nul := bytes.IndexByte(name, 0); nul >= 0 {
		name = name[:nul]
	}
	secret, ok := c.secret(name)
	if !ok {
		return false
	}
	mac := hmac.New(md5.New, secret)
	mac.Write(challenge)
	var want [2 * md5.Size]byte
	hex.Encode(want[:], mac.Sum(nil))
	return subtle.ConstantTimeCompare(want[:], resp[sp+1:sp+1+2*md5.Size]) == 1
}

// saslExchange is a connection's SASL progress: libsasl2 keeps one
// exchange per connection, restarted by every SASL_AUTH.
type saslExchange struct {
	state     uint8  // saslIdle, ...
	done      bool   // libsasl2's doneflag: an exchange succeeded (see saslAuth)
	challenge []byte // what the last continue sent
	user      []byte // LOGIN's user name, between its two steps
	scram     *scram.ServerConversation
}

const (
	saslIdle          = iota // no exchange, or a finished one: a step fails
	saslWantPlain            // PLAIN started without its message
	saslWantCRAM             // CRAM-MD5 challenge sent
	saslWantSCRAM            // SCRAM: the conversation awaits the client's next message
	saslSCRAMFinal           // SCRAM: server-final sent; the next step ends it
	saslWantLoginUser        // LOGIN: "Username:" sent
	saslWantLoginPass        // LOGIN: "Password:" sent
)

// saslAuth runs SASL_AUTH and SASL_STEP once their data has arrived.
func (s *Session) saslAuth(h *binHeader, mech, data []byte, step bool) {
	// memcached starts every exchange unauthenticated.
	s.auth.saslPassed = false
	c, x := s.env.SASL, &s.auth.sasl
	var ok, cont bool
	switch {
	case step:
		state := x.state
		x.state = saslIdle
		if x.done {
			// libsasl2 refuses every step once an exchange has succeeded
			// on the connection ("attempting server step after doneflag").
			state, x.scram = saslIdle, nil
		}
		switch state {
		case saslWantPlain:
			// libsasl2's PLAIN stays at its step after a wrong message,
			// so a later step may still succeed; CRAM-MD5 is then done.
			if ok = c.checkPlain(data); !ok {
				x.state = saslWantPlain
			}
		case saslWantCRAM:
			ok = c.checkCRAM(x.challenge, data)
		case saslWantSCRAM:
			cont = s.scramContinue(data)
		case saslSCRAMFinal:
			// libsasl2 ends the exchange on this step whatever it carries.
			ok = x.scram.Valid()
		case saslWantLoginUser:
			cont = x.loginPrompt(data)
		case saslWantLoginPass:
			pw, found := c.secret(x.user)
			ok = found && subtle.ConstantTimeCompare(pw, data) == 1
		}
		if state >= saslWantSCRAM && x.state == saslIdle {
			x.scram = nil
		}
	case x.done && c.mechanism(mech) != "" && (len(data) > 0 || c.mechanism(mech) != saslPlain):
		// libsasl2's start steps at once unless the mechanism waits for
		// the client (PLAIN without its message), and that step fails
		// after a success; the failed start clears the flag, so a client
		// that logs in again fails once, then succeeds.
		x.state, x.scram = saslIdle, nil
	default:
		x.state, x.scram = saslIdle, nil
		switch c.mechanism(mech) {
		case saslPlain:
			if len(data) == 0 { // no initial response: ask for it
				x.challenge = x.challenge[:0]
				x.state, cont = saslWantPlain, true
			} else {
				ok = c.checkPlain(data)
			}
		case saslLogin: // the user name may come as the initial response
			if len(data) == 0 {
				x.challenge = append(x.challenge[:0], "Username:"...)
				x.state, cont = saslWantLoginUser, true
			} else {
				cont = x.loginPrompt(data)
			}
		case saslCRAMMD5:
			// The server speaks first; an initial response is a
			// protocol error to libsasl2.
			if len(data) == 0 {
				x.challenge = c.cramChallenge(x.challenge[:0], s.env.Store.Now())
				x.state, cont = saslWantCRAM, true
			}
		case "":
		default: // a SCRAM
			conv, err := c.startSCRAM(c.mechanism(mech))
			if err != nil {
				break
			}
			x.scram, x.state = conv, saslWantSCRAM
			x.challenge = x.challenge[:0]
			if len(data) > 0 { // client-first as the initial response
				cont = s.scramContinue(data)
			} else {
				cont = true
			}
		}
	}
	switch {
	case cont:
		body := x.challenge
		at := len(s.out)
		s.out = appendBinHeader(s.out, h.opcode, statusAuthContinue, 0, 0, uint32(len(body)), h.opaque, 0)
		if s.log.verbose {
			s.vlogBinResponse(at, false)
		}
		s.out = append(s.out, body...)
	case ok:
		s.auth.saslPassed, x.done = true, true
		s.env.counters.authCmds.Add(1)
		s.binReply(h, nil, nil, []byte(saslAuthOK), 0)
	default:
		if !step {
			x.done = false
		}
		s.env.counters.authCmds.Add(1)
		s.env.counters.authErrors.Add(1)
		s.binError(h, statusAuthError)
	}
}

// saslRefuse ends the exchange under way as failed, for a message that
// could not be part of any.
func (s *Session) saslRefuse(h *binHeader) {
	s.auth.saslPassed = false
	s.auth.sasl.state, s.auth.sasl.scram = saslIdle, nil
	s.env.counters.authCmds.Add(1)
	s.env.counters.authErrors.Add(1)
	s.binError(h, statusAuthError)
}

// loginPrompt keeps LOGIN's user name and asks for the password.
func (x *saslExchange) loginPrompt(user []byte) bool {
	x.user = append(x.user[:0], user...)
	x.challenge = append(x.challenge[:0], "Password:"...)
	x.state = saslWantLoginPass
	return true
}

// scramContinue feeds data to the SCRAM conversation under way and keeps
// its reply in the exchange's challenge; it reports whether the exchange
// goes on (false: a failure, the exchange is over).
func (s *Session) scramContinue(data []byte) bool {
	x := &s.auth.sasl
	resp, err := s.env.SASL.scramStep(x.scram, data)
	if err != nil {
		x.state, x.scram = saslIdle, nil
		return false
	}
	x.challenge = append(x.challenge[:0], resp...)
	if x.scram.Done() {
		x.state = saslSCRAMFinal
	} else {
		x.state = saslWantSCRAM
	}
	return true
}

// saslAllowed reports whether opcode may run before authentication.
func saslAllowed(opcode uint8) bool {
	switch opcode {
	case opSASLList, opSASLAuth, opSASLStep, opVersion:
		return true
	}
	return false
}
