package sasldb

import (
	"strings"
	"testing"
)

// TestMatchPasswordFile: the MEMCACHED_SASL_PWDB check as memcached 1.6.42
// and later make it (sasl_defs.c): every line is compared, so a user's
// later line counts too, and a line is "user:password" ended by ':', a
// line end or nothing.
func TestMatchPasswordFile(t *testing.T) {
	long := strings.Repeat("x", PasswordEntryMax-1)
	for _, c := range []struct {
		name, file, user, pass string
		want                   bool
	}{
		{"the pair", "alice:secret\n", "alice", "secret", true},
		{"a wrong password", "alice:secret\n", "alice", "secreT", false},
		{"a prefix of the password", "alice:secret\n", "alice", "secre", false},
		{"the password and more", "alice:secret\n", "alice", "secrets", false},
		{"a prefix of the user", "alice:secret\n", "alic", "secret", false},
		{"an unknown user", "alice:secret\n", "bob", "secret", false},
		{"more fields", "alice:secret:uid=1\n", "alice", "secret", true},
		{"a CRLF line", "alice:secret\r\n", "alice", "secret", true},
		{"no last newline", "bob:x\nalice:secret", "alice", "secret", true},
		{"a NUL after the password", "alice:secret\x00junk\n", "alice", "secret", true},
		{"an empty password", "alice:\n", "alice", "", true},
		// 1.6.18 stopped at the first line naming the user; 1.6.42 reads on.
		{"the user's second line", "bob:old\nbob:new\n", "bob", "new", true},
		{"the user's first line", "bob:old\nbob:new\n", "bob", "old", true},
		// fgets reads a long line in pieces of 255 bytes, each an entry.
		{"a piece of a long line", long + "carol:pw\n", "carol", "pw", true},
		{"an empty user", ":pw\n", "", "pw", false},
		{"a pair too long to check", "u:" + long[:252] + "\n", "u", long[:252], false},
		{"an empty file", "", "alice", "secret", false},
	} {
		if got := MatchPasswordFile(strings.NewReader(c.file), []byte(c.user), []byte(c.pass)); got != c.want {
			t.Errorf("%s: %q with %s/%s = %v, want %v", c.name, c.file, c.user, c.pass, got, c.want)
		}
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestMatchPasswordFileReadsAll: the check reads the whole file whether the
// user is on its first line, on none, or on its first line with another
// password, so that its time does not say which (the leak memcached 1.6.42
// fixed by no longer stopping at the user's line).
func TestMatchPasswordFileReadsAll(t *testing.T) {
	file := "alice:secret\n" + strings.Repeat("someone:else\n", 1000)
	for _, c := range []struct{ user, pass string }{
		{"alice", "secret"}, {"alice", "wrong"}, {"mallory", "secret"},
	} {
		r := &countingReader{r: strings.NewReader(file)}
		MatchPasswordFile(r, []byte(c.user), []byte(c.pass))
		if r.n != len(file) {
			t.Errorf("%s/%s: read %d of the file's %d bytes", c.user, c.pass, r.n, len(file))
		}
	}
}
