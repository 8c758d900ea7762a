package cli

import (
	"fmt"
	"io"
)

// Level is a doctor verdict.
type Level int

const (
	OK Level = iota
	WARN
	FAIL
)

func (l Level) String() string {
	return [...]string{"OK", "WARN", "FAIL"}[l]
}

// Check is one doctor line.
type Check struct {
	Level Level
	Topic string // what was checked, e.g. "kernel", "irq 131"
	Text  string // the finding; WARN and FAIL lines include the fix
}

// report collects doctor lines in order.
type report struct{ checks []Check }

func (r *report) add(l Level, topic, format string, a ...any) {
	r.checks = append(r.checks, Check{Level: l, Topic: topic, Text: fmt.Sprintf(format, a...)})
}

// problem records a WARN, or a FAIL when the requested mode cannot work
// without what is missing.
func (r *report) problem(fatal bool, topic, format string, a ...any) {
	l := WARN
	if fatal {
		l = FAIL
	}
	r.add(l, topic, format, a...)
}

func (r *report) worst() Level {
	w := OK
	for _, c := range r.checks {
		w = max(w, c.Level)
	}
	return w
}

func (r *report) print(w io.Writer) {
	for _, c := range r.checks {
		fmt.Fprintf(w, "%-4s %s: %s\n", c.Level, c.Topic, c.Text)
	}
}
