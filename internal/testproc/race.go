package testproc

import "strings"

// A server built with -race (GOCACHED_IT_RACE=1) prints each data race it
// finds and goes on serving; only its exit status says so (66), and a
// server killed at the end of a test never gets there. The harness reads
// the reports from the output instead.

const (
	raceBanner = "WARNING: DATA RACE"
	raceRule   = "=================="
)

// RaceReport is the first data race report in the server's output so far
// (the first MiB of it), or "" when there is none.
func (p *Proc) RaceReport() string { return raceReport(p.Output()) }

// raceReport cuts the first report out of out: from the rule line before
// the banner to the rule line that closes it (or the end of out).
func raceReport(out string) string {
	i := strings.Index(out, raceBanner)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(out[:i], raceRule)
	if start < 0 {
		start = i
	}
	end := len(out)
	if j := strings.Index(out[i:], raceRule); j >= 0 {
		end = i + j + len(raceRule)
	}
	return out[start:end]
}
