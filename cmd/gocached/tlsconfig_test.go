package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSLoadFailureAsMemcached: a certificate, key or CA file -Z cannot
// use exits 64 (memcached's EX_USAGE from ssl_init) with memcached's line
// first: "Error loading the certificate chain: FILE : reason".
func TestTLSLoadFailureAsMemcached(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("junk\n"), 0o644)
	missing := filepath.Join(dir, "missing.pem")
	for _, tt := range []struct{ opts, want string }{
		{"ssl_chain_cert=" + missing, "Error loading the certificate chain: " + missing + " : No such file or directory"},
		{"ssl_chain_cert=" + junk, "Error loading the certificate chain: " + junk + " : "},
	} {
		_, stderr, code := runBinary(t, "-p", "-1", "-l", "127.0.0.1", "-Z", "-o", tt.opts)
		if code != 64 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("-Z -o %s: exit %d, stderr %q; want 64 and %q first", tt.opts, code, stderr, tt.want)
		}
	}
}
