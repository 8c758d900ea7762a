package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPasswordFileLogins: the MEMCACHED_SASL_PWDB file as memcached 1.6.45
// reads it, every line compared whatever the earlier ones held, so a user
// listed twice logs in with either password (1.6.18 stopped at the first
// line naming the user).
func TestPasswordFileLogins(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pwdb")
	lines := []string{"alice:secret", "bob:pw:extra field", "carol:first", "carol:second", "dave:"}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &SASL{PasswordFile: file}
	for _, tc := range []struct {
		user, pass string
		ok         bool
	}{
		{"alice", "secret", true},
		{"alice", "secre", false},
		{"alice", "secrets", false},
		{"alic", "secret", false},
		{"bob", "pw", true},
		// memcached compares the password's bytes, then wants a ':', a
		// line end or the end of its buffer after them: the whole rest
		// of the line is a password too.
		{"bob", "pw:extra field", true},
		{"bob", "pw:extra", false},
		{"carol", "first", true},
		{"carol", "second", true},
		{"carol", "third", false},
		{"dave", "", true},
		{"eve", "secret", false},
		{"", "secret", false},
		{"alice", strings.Repeat("x", 300), false},
	} {
		if got := c.checkPassword([]byte(tc.user), []byte(tc.pass)); got != tc.ok {
			t.Errorf("%q / %q: login %v, want %v", tc.user, tc.pass, got, tc.ok)
		}
	}
}
