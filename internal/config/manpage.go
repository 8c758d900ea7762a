package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// ManPage renders gocached(1) from the flag table itself, so the manual
// never drifts from -h. contrib/gocached.1 is its output
// (`gocached man > contrib/gocached.1`); a test keeps the two equal.
func ManPage(fs *pflag.FlagSet, version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH GOCACHED 1 \"\" \"gocached %s\" \"User Commands\"\n", version)
	b.WriteString(".SH NAME\ngocached \\- a memcached-compatible cache server\n")
	b.WriteString(".SH SYNOPSIS\n.B gocached\n[\\fIoptions\\fR]\n.br\n.B gocached\n" +
		"\\fBnapi\\fR|\\fBdoctor\\fR|\\fBping\\fR|\\fBman\\fR [\\fIargs\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n" +
		"gocached is a drop-in replacement for memcached 1.6: the same text, meta and binary protocols, " +
		"the same flags, stats names and error strings. On Linux it serves from epoll (or io_uring) reactors on locked " +
		"OS threads, routes every connection to the reactor that owns its NAPI ID, and can set the kernel's " +
		"per-NAPI knobs itself (\\fB\\-\\-poll\\-mode\\fR) so that IRQ suspension pays off.\n")
	b.WriteString(".SH OPTIONS\n")
	fs.VisitAll(func(f *pflag.Flag) {
		b.WriteString(".TP\n")
		if f.Shorthand != "" {
			fmt.Fprintf(&b, "\\fB\\-%s\\fR, ", roff(f.Shorthand))
		}
		fmt.Fprintf(&b, "\\fB\\-\\-%s\\fR", roff(f.Name))
		_, usage := pflag.UnquoteUsage(f)
		if name := argName(f); name != "" {
			fmt.Fprintf(&b, " \\fI%s\\fR", roff(name))
		}
		b.WriteString("\n" + roff(usage))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(&b, " (default: %s)", roff(f.DefValue))
		}
		b.WriteString("\n")
	})
	b.WriteString(".SH SIGNALS\n" +
		"SIGINT, SIGTERM and SIGUSR1 stop accepting, let in-flight replies finish, restore any NAPI " +
		"knobs gocached changed, and exit 0. SIGHUP reloads the \\fB\\-Z\\fR certificate (ignored without \\fB\\-Z\\fR); SIGPIPE is ignored.\n")
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B SASL_CONF_PATH\n" +
		"the directory holding memcached.conf, Cyrus SASL's configuration for \\fB\\-S\\fR (mech_list, sasldb_path); " +
		"without it /etc/sasl and /etc/sasl2 are searched, as memcached does.\n.TP\n.B MEMCACHED_SASL_PWDB\n" +
		"a user:password file \\fB\\-S\\fR checks PLAIN clients against instead.\n")
	b.WriteString(".SH EXIT STATUS\n0 after a clean stop; for a bad command line memcached's status " +
		"(1, or 64 for the checks made once every flag is read); 67 for an unknown \\fB\\-u\\fR user; " +
		"71 when a listener cannot be set up, the open files limit cannot be raised to \\fB\\-c\\fR, " +
		"or \\fB\\-r\\fR finds the core file limit left at 0; " +
		"1 when serving fails.\n")
	b.WriteString(".SH SEE ALSO\n.BR memcached (1)\n")
	return b.String()
}

// roff escapes text for a man page: backslashes and dashes, and a leading
// dot or quote that would read as a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	s = strings.ReplaceAll(s, "-", "\\-")
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = "\\&" + s
	}
	return s
}
