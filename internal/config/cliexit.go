package config

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// A bad command line exits as memcached 1.6.18's does, so that scripts and
// service managers that check memcached's status and message see the same
// from gocached. memcached has two statuses for it:
const (
	// exitFailure is EXIT_FAILURE: getopt's errors and the checks memcached
	// makes while it reads each flag (`return 1` in its getopt loop).
	exitFailure = 1
	// exitUsage is EX_USAGE: the checks after the getopt loop (-I against
	// -m, slab_chunk_max, -B, -S, -Y, the port, -Z) and gocached's own
	// flags.
	exitUsage = 64
)

// UsageError is a bad command line. It is the one place the exit rule
// lives: every check builds one with mcFail, mcUsage, refusef or usagef,
// and the command prints it with Write and exits with its Status.
type UsageError struct {
	Status int
	msg    string // may hold several lines, without the last newline
	// memcached: msg is memcached's own text, printed as it is; otherwise
	// it is gocached's, printed after "gocached: ".
	memcached bool
	// warnings are what memcached printed before the refusal, while it
	// read the flags before (-t 100's warning).
	Warnings []string
}

func (e *UsageError) Error() string { return e.msg }

// Write prints the error as memcached prints its own: the text alone.
func (e *UsageError) Write(w io.Writer) {
	for _, line := range e.Warnings {
		fmt.Fprintln(w, line)
	}
	if e.memcached {
		fmt.Fprintln(w, e.msg)
		return
	}
	fmt.Fprintf(w, "gocached: %s\n", e.msg)
}

// withWarnings is err with memcached's warnings before it.
func withWarnings(err error, warnings []string) error {
	var ue *UsageError
	if len(warnings) == 0 || !errors.As(err, &ue) {
		return err
	}
	c := *ue
	c.Warnings = warnings
	return &c
}

// mcFail is memcached's message for a check in its getopt loop: status 1.
func mcFail(format string, args ...any) error {
	return &UsageError{Status: exitFailure, msg: fmt.Sprintf(format, args...), memcached: true}
}

// mcUsage is memcached's message for a check after its getopt loop: 64.
func mcUsage(format string, args ...any) error {
	return &UsageError{Status: exitUsage, msg: fmt.Sprintf(format, args...), memcached: true}
}

// refusef is gocached's refusal of a memcached flag value that memcached
// itself reads with atoi/strtol and takes silently (-p abc, -a 9, -b 0,
// -o idle_timeout=abc, ...): such a value is almost surely a typo, and
// memcached would start with something else than asked (port 0, mask 0).
// Status 1, memcached's status for a bad value. Parse reports it only
// once memcached's own checks, in and after its loop, have passed on
// memcached's reading of the value (getoptLoop.note).
func refusef(format string, args ...any) error {
	return &UsageError{Status: exitFailure, msg: fmt.Sprintf(format, args...)}
}

// usagef is a bad value of one of gocached's own flags (--engine,
// --poll-mode, ...), or a limit of gocached's without a memcached message:
// EX_USAGE, gocached's wording.
func usagef(format string, args ...any) error {
	return &UsageError{Status: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// illegalArgument is the line memcached prints after each of getopt's
// complaints, when its loop gets '?'.
const illegalArgument = "\nIllegal argument \"?\""

// Argv0 names the program in getopt's messages, as glibc's getopt prints
// argv[0]; the command sets it.
var Argv0 = "gocached"

// getoptError turns pflag's parse errors into glibc getopt_long's text and
// memcached's line after it: memcached's loop gets '?' and says
// `Illegal argument "?"`, status 1. A bad value pflag itself parses (an
// int flag) is memcached's atoi taking garbage: refused with status 1 for
// memcached's flags (they have a one-letter name), 64 for gocached's.
func getoptError(err error, args []string) error {
	const illegal = illegalArgument
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist):
		if short := notExist.GetSpecifiedShortnames(); short != "" {
			return mcFail("%s: invalid option -- '%s'%s", Argv0, notExist.GetSpecifiedName(), illegal)
		}
		// getopt names the argument whole, with its "=value".
		opt := "--" + notExist.GetSpecifiedName()
		for _, a := range args {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, opt+"=") {
				opt = a
				break
			}
			if a == opt {
				break
			}
		}
		return mcFail("%s: unrecognized option '%s'%s", Argv0, opt, illegal)
	case errors.As(err, &required):
		if required.GetSpecifiedShortnames() != "" {
			return mcFail("%s: option requires an argument -- '%s'%s", Argv0, required.GetSpecifiedName(), illegal)
		}
		return mcFail("%s: option '--%s' requires an argument%s", Argv0, required.GetSpecifiedName(), illegal)
	case errors.As(err, &syntax):
		return mcFail("%s: unrecognized option '%s'%s", Argv0, syntax.GetSpecifiedFlag(), illegal)
	case errors.As(err, &invalid):
		if invalid.GetFlag().Shorthand != "" {
			return refusef("%v", err)
		}
		return usagef("%v", err)
	}
	return usagef("%v", err)
}

// cInt is an int flag of memcached's that memcached reads with atoi: a
// value that is not a clean number is kept as atoi reads it (its leading
// digits, 0 if none), so that memcached's own check on the number can
// fire with memcached's message (-c abc: "Maximum connections must be
// greater than 0"); check refuses the rest.
type cInt struct {
	p   *int
	raw string // the text given, when it was not a clean number
}

func newCInt(p *int, def int) *cInt { *p = def; return &cInt{p: p} }

func (v *cInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	v.raw = ""
	if err != nil {
		n, v.raw = cAtoi(s), s
	}
	*v.p = n
	return nil
}
func (v *cInt) String() string { return strconv.Itoa(*v.p) }
func (v *cInt) Type() string   { return "int" }

// check applies memcached's check on the number (rejected with memcached's
// message msg), then refuses garbage memcached would take.
func (v *cInt) check(flag string, rejected bool, msg string) error {
	if rejected {
		return mcFail("%s", msg)
	}
	if v.raw != "" {
		return refusef("invalid value %q for %s: want a number", v.raw, flag)
	}
	return nil
}

// cFloat is cInt for -f, which memcached reads with atof.
type cFloat struct {
	p   *float64
	raw string
}

func newCFloat(p *float64, def float64) *cFloat { *p = def; return &cFloat{p: p} }

func (v *cFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	v.raw = ""
	if err != nil {
		f, v.raw = cAtof(s), s
	}
	*v.p = f
	return nil
}
func (v *cFloat) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v *cFloat) Type() string   { return "float64" }

// cBlanks are what C's isspace calls blanks.
const cBlanks = " \t\n\v\f\r"

// cAtoi reads a number as C's atoi does: blanks, a sign, the leading
// digits; 0 if none.
func cAtoi(s string) int {
	s = strings.TrimLeft(s, cBlanks)
	n, i, neg := 0, 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg, i = s[i] == '-', i+1
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<40; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// cAtof reads a number as C's atof does: the longest leading part that is
// a number, 0 if none.
func cAtof(s string) float64 {
	s = strings.TrimLeft(s, cBlanks)
	for end := len(s); end > 0; end-- {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return f
		}
	}
	return 0
}

// cStrtoul is memcached's safe_strtoul: a whole unsigned number, blanks
// around it allowed, no minus sign.
func cStrtoul(s string) (uint64, bool) {
	t := strings.TrimSpace(s)
	if t == "" || strings.Contains(t, "-") {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(t, "+"), 10, 64)
	return n, err == nil
}

// cStrtol is memcached's safe_strtol: a whole signed number.
func cStrtol(s string) (int64, bool) {
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
	return n, t != "" && err == nil
}

// cStrtod is memcached's safe_strtod.
func cStrtod(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// ExitUsage is EX_USAGE, for the server's refusals made with memcached's
// status once the command line is read (an unusable -Z certificate).
const ExitUsage = exitUsage
