package integration

import "testing"

// TestParseMemcapable pins the output parser to memccapable 1.1.4's format,
// including a failed test whose reply is printed inside the brackets.
func TestParseMemcapable(t *testing.T) {
	out := "ascii version                           [pass]\n" +
		"ascii flush noreply                     [FAIL]\n" +
		"ascii add                               [STORED\n]\n[FAIL]\n" +
		"ascii prepend noreply                   [pass]\n" +
		"ascii stat                              2 of 5 tests failed\n[pass]\n"
	want := []struct {
		name   string
		passed bool
	}{
		{"version", true}, {"flush noreply", false}, {"add", false},
		{"prepend noreply", true}, {"stat", true},
	}
	got := parseMemcapable(out)
	if len(got) != len(want) {
		t.Fatalf("parsed %d tests, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].name != w.name || got[i].passed != w.passed {
			t.Errorf("test %d: got %q passed=%v, want %q passed=%v", i, got[i].name, got[i].passed, w.name, w.passed)
		}
	}
}
