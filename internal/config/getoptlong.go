package config

import (
	"strings"

	"github.com/spf13/pflag"
)

// memcachedLongOpts is memcached 1.6.18's getopt_long table, in its order:
// glibc names an ambiguous abbreviation's possibilities in this order.
var memcachedLongOpts = []string{
	"unix-mask", "enable-shutdown", "enable-ssl", "port", "unix-socket", "udp-port",
	"memory-limit", "disable-evictions", "conn-limit", "lock-memory", "help", "license",
	"version", "enable-coredumps", "verbose", "daemon", "listen", "user", "pidfile",
	"slab-growth-factor", "slab-min-size", "threads", "enable-largepages",
	"max-reqs-per-event", "disable-cas", "listen-backlog", "protocol", "max-item-size",
	"enable-sasl", "disable-flush-all", "disable-dumping", "disable-watch", "auth-file",
	"memory-file", "extended", "napi-ids",
}

// expandLongOptions does what glibc's getopt_long does before memcached
// sees an option and pflag does not: an unambiguous abbreviation of a long
// option stands for it (--conn=5 is --conn-limit=5), an ambiguous one is
// refused with getopt's list of possibilities, and a memcached option that
// takes no argument refuses one given with "=" (--lock-memory=5). A prefix
// is matched against memcached's Options first, so every memcached
// command line means what it means to memcached; only a prefix of none of
// them may abbreviate one of gocached's own long flags.
//
// On a refusal it returns the arguments before the refused one with it,
// for memcached's loop to read (and maybe refuse) first.
//
// Values are skipped the way getopt skips them: the argument after an
// option that requires one is that option's value, whatever it looks like.
func expandLongOptions(fs *pflag.FlagSet, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			full, err := resolveLongOption(fs, name, a)
			if err != nil {
				return out, err
			}
			f := fs.Lookup(full)
			if f == nil {
				out = append(out, a) // pflag names it unrecognized
				continue
			}
			if hasVal && f.NoOptDefVal != "" && isMemcachedLongOpt(f.Name) {
				if f.Name != "verbose" {
					return out, mcFail("%s: option '--%s' doesn't allow an argument%s", Argv0, f.Name, illegalArgument)
				}
				// memcached's -v takes an optional argument and ignores it:
				// --verbose=2 is one -v.
				hasVal = false
			}
			if !hasVal {
				out = append(out, "--"+f.Name)
				if f.NoOptDefVal == "" && i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				continue
			}
			out = append(out, "--"+f.Name+"="+val)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			out = append(out, a)
			if shortClusterWantsNext(fs, a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// resolveLongOption is getopt_long's match of one long option name (as
// given, before any "="): an exact name, else the one option it
// abbreviates. arg is the whole argument, which getopt quotes when the
// abbreviation is ambiguous. An unknown name comes back as it is.
func resolveLongOption(fs *pflag.FlagSet, name, arg string) (string, error) {
	norm := name
	if name == "" || fs.Lookup(norm) != nil {
		return norm, nil
	}
	var mine []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !isMemcachedLongOpt(f.Name) && !f.Hidden {
			mine = append(mine, f.Name)
		}
	})
	for _, table := range [][]string{memcachedLongOpts, mine} {
		var found []string
		for _, opt := range table {
			if strings.HasPrefix(opt, norm) {
				found = append(found, opt)
			}
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		}
		var b strings.Builder
		for _, opt := range found {
			b.WriteString(" '--" + opt + "'")
		}
		return "", mcFail("%s: option '%s' is ambiguous; possibilities:%s%s", Argv0, arg, b.String(), illegalArgument)
	}
	return norm, nil
}

// shortClusterWantsNext reports whether a cluster of short Options such as
// -vvl ends with an option that takes the next argument as its value.
func shortClusterWantsNext(fs *pflag.FlagSet, a string) bool {
	for i := 1; i < len(a); i++ {
		f := fs.ShorthandLookup(a[i : i+1])
		if f == nil {
			return false // pflag refuses the cluster
		}
		if f.NoOptDefVal == "" {
			return i == len(a)-1 // the rest of the cluster is the value
		}
	}
	return false
}

func isMemcachedLongOpt(name string) bool {
	for _, opt := range memcachedLongOpts {
		if opt == name {
			return true
		}
	}
	return false
}
