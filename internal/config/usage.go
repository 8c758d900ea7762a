package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// argName is the name -h and the manual give a flag's argument: pflag's,
// except that a flag taking no argument shows none (pflag names a count
// flag's "count", and a bool flag's back-quoted usage text) and a
// repeatable string is a "string".
func argName(f *pflag.Flag) string {
	if f.NoOptDefVal != "" {
		return ""
	}
	name, _ := pflag.UnquoteUsage(f)
	if name == "stringArray" {
		return "string"
	}
	return name
}

// flagUsages is pflag's flag table as -h prints it, with argName's names,
// and without pflag's "[=true|false]" on memcached's switches, which like
// memcached's getopt_long take no value ("--disable-cas=true" is refused).
// Every change keeps the width, so the table stays aligned.
func flagUsages(fs *pflag.FlagSet) string {
	text := fs.FlagUsages()
	fs.VisitAll(func(f *pflag.Flag) {
		long := "--" + f.Name
		if name, _ := pflag.UnquoteUsage(f); name != "" && name != argName(f) {
			text = strings.Replace(text, long+" "+name+" ", long+" "+pad(argName(f), len(name))+" ", 1)
		}
		if f.Value.Type() == "bool" && isMemcachedLongOpt(f.Name) {
			const values = "[=true|false]"
			text = strings.Replace(text, long+values, long+strings.Repeat(" ", len(values)), 1)
		}
	})
	return text
}

// pad is s left-aligned in width n (s is never longer here).
func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }

// HelpText is -h's output: a line naming the program, the synopsis, and
// the flag table.
func (o *Options) HelpText(version string) string {
	return fmt.Sprintf("gocached %s: a memcached-compatible cache server\n\n", version) +
		"Usage: gocached [flags]\n       gocached napi|doctor|ping [args]\n       gocached man\n\nFlags:\n" + o.Usage
}
