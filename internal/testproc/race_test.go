package testproc

import "testing"

func TestRaceReport(t *testing.T) {
	report := "==================\nWARNING: DATA RACE\nWrite at 0x00c000 by goroutine 7:\n  main.f()\n=================="
	cases := []struct{ name, out, want string }{
		{"none", "gocached starting\nlistening\n", ""},
		{"one", "listening\n" + report + "\nmore output\n", report},
		{"first of two", report + "\n" + report + "\n", report},
		{"cut off by the output limit", "x\n==================\nWARNING: DATA RACE\nRead at", "==================\nWARNING: DATA RACE\nRead at"},
		{"no rule before it", "WARNING: DATA RACE\nRead at\n==================", "WARNING: DATA RACE\nRead at\n=================="},
	}
	for _, c := range cases {
		if got := raceReport(c.out); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
