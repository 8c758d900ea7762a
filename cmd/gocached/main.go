// Command gocached is a memcached-compatible cache server. It takes
// memcached's flags (see -h); `gocached napi ...` and `gocached doctor` are
// subcommands for the kernel side.
package main

import (
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/procctl"
	srv "github.com/gocached/gocached/internal/server"
	"io"
	"os"
)

// version is what the protocol's `version` and `stats` report: memcached's
// version that gocached's behaviour follows, with a suffix, so clients that
// parse it (as major.minor.patch) keep working whatever the build.
const version = "1.6.18-gocached"

// buildLabel names the build for -V and the logs, never the protocol;
// set it with -ldflags "-X main.buildLabel=...".
var buildLabel = ""

// versionLine is -V's output.
func versionLine() string {
	if buildLabel == "" {
		return "gocached " + version
	}
	return "gocached " + version + " (build " + buildLabel + ")"
}

func main() {
	config.Argv0 = os.Args[0] // getopt's messages name the program as it was run
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, returning the process status: 0 after a
// clean shutdown or -h/-V, 1 when serving fails, and for a bad command line
// memcached's status and message for it (see usageError).
func run(args []string, stdout, stderr io.Writer) int {
	// The official memcached image is run as `docker run IMAGE memcached
	// -m 64`; the same command line works with gocached's image.
	if len(args) > 0 && args[0] == "memcached" {
		args = args[1:]
	}
	if len(args) > 0 {
		switch args[0] {
		case "napi", "doctor":
			return runSubcommand(args[0], args[1:])
		case "ping":
			return ping(args[1:], stdout, stderr)
		case "man":
			o, err := config.Parse(nil)
			if err != nil {
				fmt.Fprintf(stderr, "gocached: %v\n", err)
				return 1
			}
			fmt.Fprint(stdout, config.ManPage(o.Flags, version))
			return 0
		}
	}
	opts, err := config.Parse(args)
	if err != nil {
		var ue *config.UsageError
		if errors.As(err, &ue) {
			ue.Write(stderr)
			return ue.Status
		}
		fmt.Fprintf(stderr, "gocached: %v\n", err)
		return 1
	}
	for _, w := range opts.Warnings { // as memcached prints them, and goes on
		fmt.Fprintln(stderr, w)
	}
	switch {
	case opts.Help:
		fmt.Fprintf(stdout, "gocached %s: a memcached-compatible cache server\n\n", version)
		fmt.Fprintf(stdout, "Usage: gocached [flags]\n       gocached napi|doctor|ping [args]\n       gocached man\n\nFlags:\n%s", opts.Usage)
		return 0
	case opts.Version:
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	// memcached raises the core file limit (-r) and makes room for -c
	// open files before it daemonizes, and exits 71 (EX_OSERR) when it
	// may not.
	if opts.Proc.CoreDumps {
		if err := procctl.EnsureCoreDumps(); err != nil {
			fmt.Fprintln(stderr, err)
			return 71
		}
	}
	if err := procctl.EnsureFileLimit(opts.Reactor.MaxConns); err != nil {
		fmt.Fprintln(stderr, err)
		return 71
	}
	if opts.Proc.Daemon && !procctl.InDaemonChild() {
		return procctl.Daemonize(args, opts.Verbosity > 0, stderr)
	}
	if procctl.InDaemonChild() && !opts.Proc.CoreDumps {
		// memcached's daemon(3) call: the working directory becomes /
		// (kept with -r, for the core file), before any path of the
		// command line (-P, -s, -e, -Y) is used.
		if err := os.Chdir("/"); err != nil {
			fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
			return 1
		}
	}
	build := srv.Build{Version: version, Label: buildLabel}
	return srv.Serve(opts, build, srv.NewLogger(stderr, opts.Verbosity), stderr)
}
