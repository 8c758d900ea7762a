package protocol

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRecordBinaryWants prints binWants from a real memcached when
// GOCACHED_RECORD_BINARY=1; it is how binary_wants_test.go was made.
func TestRecordBinaryWants(t *testing.T) {
	if os.Getenv("GOCACHED_RECORD_BINARY") != "1" {
		t.Skip("set GOCACHED_RECORD_BINARY=1 to re-record the binary replies")
	}
	addr := startMemcached(t)
	var b strings.Builder
	b.WriteString("package protocol\n\n// binWants are memcached 1.6.18's replies to binScripts, as describePackets\n// renders them (recorded by TestRecordBinaryWants).\nvar binWants = map[string]string{\n")
	for _, sc := range binScripts {
		flushMemcached(t, addr)
		ref := exchangeAll(t, addr, sc.in)
		fmt.Fprintf(&b, "\t%q: %q,\n", sc.name, describePackets(ref.out, ref.closed))
	}
	b.WriteString("}\n")
	if err := os.WriteFile("binary_wants_test.go", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
