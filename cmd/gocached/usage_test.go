package main

import (
	"strings"
	"testing"
)

// TestUsageArgumentNames: -h and the manual name an argument only for a
// flag that takes one, and memcached's switches, which refuse a value as
// its getopt_long does, do not advertise "[=true|false]"; the table stays
// aligned (every description starts in one column).
func TestUsageArgumentNames(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(o.usage, "\n"), "\n")
	col := strings.Index(lines[0], "TCP port") // -p's description
	if col < 0 {
		t.Fatalf("first -h line %q is not -p's", lines[0])
	}
	for _, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "-") {
			continue // a wrapped description
		}
		for _, bad := range []string{"--disable-cas[", "--verbose count", "stringArray", "--lock-memory["} {
			if strings.Contains(line, bad) {
				t.Errorf("-h line %q shows %q", line, bad)
			}
		}
		if len(line) <= col || line[col-1] != ' ' || line[col] == ' ' {
			t.Errorf("-h line %q: its description does not start at column %d", line, col)
		}
	}
	man := manPage(o.flags)
	for _, bad := range []string{`debug\-time\fR \fI`, `verbose\fR \fIcount`, `stringArray`} {
		if strings.Contains(man, bad) {
			t.Errorf("the manual shows %q", bad)
		}
	}
}
