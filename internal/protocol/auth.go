package protocol

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
)

// memcached's ASCII authentication (-Y FILE). Until a text connection has
// authenticated, every line is read as the auth command "set <key> <flags>
// <exptime> <n>" followed by n bytes of "user password" and "\r\n"; the key,
// flags and exptime are ignored. A good pair gets STORED, a bad one
// "CLIENT_ERROR authentication failure" (both count in auth_cmds, failures
// in auth_errors); any other line gets "CLIENT_ERROR unauthenticated".

// ASCIIAuth holds the user:password pairs of a -Y file.
type ASCIIAuth struct {
	// Path is the file's name, which `stats settings` shows as
	// auth_enabled_ascii, as memcached does.
	Path             string
	users, passwords [][]byte
}

// maxAuthEntries is memcached's limit on the lines of a -Y file that count.
const maxAuthEntries = 8

// LoadASCIIAuth reads a -Y file: one "user:password" per line (the password
// runs to the line's end). Like memcached, a line without ':' makes the
// whole file malformed, and lines past the eighth are ignored.
func LoadASCIIAuth(path string) (*ASCIIAuth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("could not open auth file %s: %w", path, err)
	}
	return NewASCIIAuth(path, data)
}

// NewASCIIAuth is LoadASCIIAuth for the file's contents, read by the
// caller (as the -u user, as memcached reads it); it fails with
// ErrAuthFileMalformed for a line without a colon.
func NewASCIIAuth(path string, data []byte) (*ASCIIAuth, error) {
	a, err := parseASCIIAuth(data)
	if a != nil {
		a.Path = path
	}
	return a, err
}

// ErrAuthFileMalformed is an -Y file with a line that is no user:password.
var ErrAuthFileMalformed = errors.New("auth file is malformed")

func parseASCIIAuth(data []byte) (*ASCIIAuth, error) {
	a := &ASCIIAuth{}
	for len(data) > 0 && len(a.users) < maxAuthEntries {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if z := bytes.IndexByte(line, 0); z >= 0 {
			line = line[:z]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return nil, ErrAuthFileMalformed
		}
		pass := line[colon+1:]
		if r := bytes.IndexByte(pass, '\r'); r >= 0 {
			pass = pass[:r]
		}
		a.users = append(a.users, bytes.Clone(line[:colon]))
		a.passwords = append(a.passwords, bytes.Clone(pass))
	}
	return a, nil
}

// Check reports whether user and password are a pair of the file.
func (a *ASCIIAuth) Check(user, pass []byte) bool {
	ok := false
	for i := range a.users {
		u := subtle.ConstantTimeCompare(user, a.users[i])
		p := subtle.ConstantTimeCompare(pass, a.passwords[i])
		if u&p == 1 {
			ok = true
		}
	}
	return ok
}

// asciiAuthMax bounds a login's data block (MAX_AUTH_REQ_LEN), and
// minAuthLine a login line without its newline (MIN_AUTH_REQ_LEN): a
// shorter one closes the connection.
const (
	asciiAuthMax = 16384
	minAuthLine  = 6
)

// asciiAuth handles the front of in for an unauthenticated text connection.
// It returns how many bytes it consumed, or minus the length it needs.
func (s *Session) asciiAuth(in []byte) (int, Status) {
	nl := bytes.IndexByte(in, '\n')
	if nl < 0 {
		if len(in) > MaxLineLen {
			return 0, Close // memcached: junk without a newline
		}
		return -(len(in) + 1), NeedMore
	}
	line := in[:nl]
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	if s.log.verbose {
		s.vlogLine('<', bytes.TrimSuffix(line, []byte("\r")))
	}
	if nl < minAuthLine || nl >= asciiAuthMax {
		// memcached 1.6.43 on: no login line is this short; and one
		// longer than its read buffer never shows its newline there.
		return 0, Close
	}
	n := s.text.tokenize(bytes.TrimSuffix(line, []byte("\r")))
	var size uint32
	ok := n >= 5 && bytes.HasPrefix(line, []byte("set"))
	if ok {
		size, ok = parseStrictUint32(s.text.token(line, 4))
	}
	s.text.noreply = false
	if !ok {
		s.reply("CLIENT_ERROR unauthenticated\r\n")
		return nl + 1, NeedMore
	}
	if size > asciiAuthMax {
		// memcached 1.6.42 on refuses the line and reads on from
		// there; the data block, if one follows, is read as lines.
		s.reply("CLIENT_ERROR auth token too long\r\n")
		return nl + 1, NeedMore
	}
	if int(size)+2 > asciiAuthMax {
		// A block that fits the limit but not, with its "\r\n", the
		// 16 KiB read buffer memcached holds it in: it closes.
		return 0, Close
	}
	total := nl + 1 + int(size) + 2
	if len(in) < total {
		return -total, NeedMore
	}
	data := in[nl+1 : total]
	s.text.noreply = false
	if data[size] != '\r' || data[size+1] != '\n' {
		s.reply("CLIENT_ERROR bad command line termination\r\n")
		return total, NeedMore
	}
	payload := data[:size]
	if z := bytes.IndexByte(payload, 0); z >= 0 {
		payload = payload[:z]
	}
	if s.text.tokenize(payload) < 2 {
		s.reply("CLIENT_ERROR bad authentication token format\r\n")
		return total, NeedMore
	}
	if s.env.ASCIIAuth.Check(s.text.token(payload, 0), s.text.token(payload, 1)) {
		s.auth.textPassed = true
		s.env.counters.authCmds.Add(1)
		s.reply(rStored)
	} else {
		s.authFailed()
	}
	return total, NeedMore
}

func (s *Session) authFailed() {
	s.env.counters.authCmds.Add(1)
	s.env.counters.authErrors.Add(1)
	s.text.noreply = false
	s.reply("CLIENT_ERROR authentication failure\r\n")
}
