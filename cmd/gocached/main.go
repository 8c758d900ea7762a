// Command gocached is a memcached-compatible cache server. It takes
// memcached's flags (see -h); `gocached napi ...` and `gocached doctor` are
// subcommands for the kernel side.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// version is what `version` and `stats` report: memcached's version that
// gocached's behaviour follows, so clients that parse it keep working.
// Override with -ldflags "-X main.version=...".
var version = "1.6.18-gocached"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, returning the process status: 0 after a
// clean shutdown or -h/-V, 2 for a bad command line, 1 when serving fails.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "napi" || args[0] == "doctor") {
		return runSubcommand(args[0], args[1:])
	}
	opts, err := parseFlags(args)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "gocached: %v (see gocached -h)\n", err)
			return 2
		}
		fmt.Fprintf(stderr, "gocached: %v\n", err)
		return 1
	}
	switch {
	case opts.help:
		fmt.Fprintf(stdout, "gocached %s: a memcached-compatible cache server\n\n", version)
		fmt.Fprintf(stdout, "Usage: gocached [flags]\n       gocached napi|doctor [args]\n\nFlags:\n%s", opts.usage)
		return 0
	case opts.version:
		fmt.Fprintf(stdout, "gocached %s\n", version)
		return 0
	}
	if opts.proc.daemon && !inDaemonChild() {
		return daemonize(args, opts.verbosity > 0, stderr)
	}
	return serve(opts, newLogger(stderr, opts.verbosity))
}
