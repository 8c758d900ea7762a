package config

import (
	"strings"
	"testing"
)

// TestUsageArgumentNames: -h and the manual name an argument only for a
// flag that takes one, and memcached's switches, which refuse a value as
// its getopt_long does, do not advertise "[=true|false]"; the table stays
// aligned (every description starts in one column).
func TestUsageArgumentNames(t *testing.T) {
	o, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(o.Usage, "\n"), "\n")
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
	man := ManPage(o.Flags, "test")
	for _, bad := range []string{`debug\-time\fR \fI`, `verbose\fR \fIcount`, `stringArray`} {
		if strings.Contains(man, bad) {
			t.Errorf("the manual shows %q", bad)
		}
	}
}

// TestManPageExitStatuses: the manual's EXIT STATUS names every status a
// start can end with, -r's 71 (memcached's "failed to ensure corefile
// creation") included, not only the listener's and the open files limit's.
func TestManPageExitStatuses(t *testing.T) {
	o, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	man := ManPage(o.Flags, "test")
	i := strings.Index(man, ".SH EXIT STATUS\n")
	if i < 0 {
		t.Fatal("the manual has no EXIT STATUS section")
	}
	section, _, _ := strings.Cut(man[i+len(".SH EXIT STATUS\n"):], ".SH ")
	for _, want := range []string{"67", "71", `\fB\-u\fR`, `\fB\-c\fR`, `\fB\-r\fR`} {
		if !strings.Contains(section, want) {
			t.Errorf("EXIT STATUS does not mention %q:\n%s", want, section)
		}
	}
}
