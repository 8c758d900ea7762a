package config

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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

// TestHelpAndManPageShareTheFlagTable: -h and the manual are rendered from
// the one flag table, so every flag a user can give appears in both, by
// its long name and its shorthand, and neither names a flag the table
// lacks.
func TestHelpAndManPageShareTheFlagTable(t *testing.T) {
	o, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	man := ManPage(o.Flags, "test")
	known := map[string]bool{}
	o.Flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		known[f.Name] = true
		if !strings.Contains(o.Usage, "--"+f.Name) {
			t.Errorf("-h lacks --%s", f.Name)
		}
		if !strings.Contains(man, `\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)) {
			t.Errorf("the manual lacks --%s", f.Name)
		}
		if f.Shorthand != "" && !strings.Contains(o.Usage, "-"+f.Shorthand+", --"+f.Name) {
			t.Errorf("-h lacks -%s beside --%s", f.Shorthand, f.Name)
		}
	})
	if len(known) < 40 {
		t.Fatalf("only %d flags in the table", len(known))
	}
	listed := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`).FindAllStringSubmatch(o.Usage, -1)
	if len(listed) < len(known) {
		t.Errorf("-h lists %d flags, the table has %d", len(listed), len(known))
	}
	for _, m := range listed {
		if !known[m[1]] {
			t.Errorf("-h names --%s, which the flag table does not have", m[1])
		}
	}
}
