package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/config"
)

// TestAuthRefusesBinaryListener: with -Y, a "proto[binary]:" listener is
// refused before anything listens, as memcached 1.6.43 and later refuse
// it: their line, the listen failure with errno 0, EX_OSERR. A
// "proto[negotiating]:" one starts, with memcached's warning.
func TestAuthRefusesBinaryListener(t *testing.T) {
	file := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(file, []byte("user:pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	status, stderr := serveArgs(t, "--engine=go", "-Y", file, "-p", "-1", "-l", "proto[binary]:127.0.0.1")
	want := "Cannot use binary protocol when ascii authentication enabled\n" +
		"failed to listen on one of interface(s) proto[binary]:127.0.0.1: Success\n"
	if status != 71 || !strings.HasPrefix(stderr, want) {
		t.Errorf("Serve = %d, stderr %q; want 71 and %q first", status, stderr, want)
	}

	o, err := config.Parse([]string{"-Y", file, "-p", "-1", "-l", "proto[negotiating]:127.0.0.1,proto[binary]:127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if refusal := refuseListenEntries(&out, o, false); refusal != binaryBesideAuth ||
		!strings.HasPrefix(out.String(), negotiatingBesideAuth+"\n"+binaryBesideAuth+"\n") {
		t.Errorf("negotiating, then binary: %q, wrote %q", refusal, out.String())
	}

	// Without -Y both are memcached's per-listener protocols.
	o, err = config.Parse([]string{"-p", "-1", "-l", "proto[negotiating]:127.0.0.1,proto[binary]:127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if refusal := refuseListenEntries(&out, o, false); refusal != "" || out.Len() != 0 {
		t.Errorf("without -Y: %q, wrote %q", refusal, out.String())
	}
}
