package protocol

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
)

// SASL authentication for binary-protocol clients, as memcached does it with
// -S and a MEMCACHED_SASL_PWDB file: one mechanism, PLAIN, checked against
// "user:password" lines. The file is read at every attempt, like memcached's
// password check, so that editing it takes effect without a restart.

// SASLMechanisms is the SASL_LIST_MECHS reply.
const SASLMechanisms = "PLAIN"

const (
	saslMaxMechLen = 32  // memcached's MAX_SASL_MECH_LEN
	saslMaxEntry   = 256 // memcached reads password lines in buffers this long
	saslAuthOK     = "Authenticated"
)

// SASLPasswordEnv is the environment variable memcached reads the password
// file's path from.
const SASLPasswordEnv = "MEMCACHED_SASL_PWDB"

// SASLFromEnvironment is NewSASL with the path memcached would use, from
// $MEMCACHED_SASL_PWDB: what -S turns on.
func SASLFromEnvironment() (*SASL, error) {
	path := os.Getenv(SASLPasswordEnv)
	if path == "" {
		return nil, fmt.Errorf("-S needs a password file: set %s to its path (lines of user:password)", SASLPasswordEnv)
	}
	return NewSASL(path)
}

// SASL is the -S configuration: where the password file is.
type SASL struct {
	PasswordFile string
}

// NewSASL checks that the password file can be read and returns the
// configuration to put in Env.SASL.
func NewSASL(passwordFile string) (*SASL, error) {
	f, err := os.Open(passwordFile)
	if err != nil {
		return nil, fmt.Errorf("sasl password file: %w", err)
	}
	f.Close()
	return &SASL{PasswordFile: passwordFile}, nil
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
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, user) || len(line) <= len(user) || line[len(user)] != ':' {
			continue
		}
		rest := line[len(user)+1:]
		if !bytes.HasPrefix(rest, pass) {
			return false
		}
		rest = rest[len(pass):]
		return len(rest) == 0 || rest[0] == ':' || rest[0] == '\r'
	}
	return false
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
	if len(authz) > 0 && !bytes.Equal(authz, user) {
		return false
	}
	return c.checkPassword(user, pass)
}

// saslAuth runs SASL_AUTH and SASL_STEP once their data has arrived.
func (s *Session) saslAuth(h *binHeader, mech, data []byte, step bool) {
	// memcached starts every exchange unauthenticated.
	s.authenticated = false
	var ok, cont bool
	switch {
	case step && !s.saslStarted:
		// A step with no exchange under way fails.
	case step:
		s.saslStarted = false
		ok = s.env.SASL.checkPlain(data)
	case string(mech) != SASLMechanisms:
		s.saslStarted = false
	case len(data) == 0:
		// PLAIN without an initial response: ask for it.
		s.saslStarted, cont = true, true
	default:
		ok = s.env.SASL.checkPlain(data)
		s.saslStarted = ok
	}
	switch {
	case cont:
		s.out = appendBinHeader(s.out, h.opcode, statusAuthContinue, 0, 0, 0, h.opaque, 0)
	case ok:
		s.authenticated = true
		s.env.counters.authCmds.Add(1)
		s.binReply(h, nil, nil, []byte(saslAuthOK), 0)
	default:
		s.env.counters.authCmds.Add(1)
		s.env.counters.authErrors.Add(1)
		s.binError(h, statusAuthError)
	}
}

// saslAllowed reports whether opcode may run before authentication.
func saslAllowed(opcode uint8) bool {
	switch opcode {
	case opSASLList, opSASLAuth, opSASLStep, opVersion:
		return true
	}
	return false
}
