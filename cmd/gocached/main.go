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

// version is what the protocol's `version` and `stats` report: the
// memcached release whose behaviour gocached follows, as the bare number
// memcached sends. Clients parse it strictly as major.minor.patch (one
// that met "1.6.18-gocached" threw inside its socket handler), so
// gocached's own identity goes elsewhere: -V, the start-up log line and
// `stats gocached`.
const version = "1.6.45"

// buildLabel names the build for -V, the logs and `stats gocached`, never
// the protocol's version; set it with -ldflags "-X main.buildLabel=...".
var buildLabel = ""

// versionLine is -V's output: gocached's name, the memcached version it
// follows, and the build.
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
// memcached's status and message for it (see config.UsageError).
func run(args []string, stdout, stderr io.Writer) int {
	// The official memcached image is run as `docker run IMAGE memcached
	// -m 64`; the same command line works with gocached's image.
	if len(args) > 0 && args[0] == "memcached" {
		args = args[1:]
	}
	if status, ok := runSubcommand(args, stdout, stderr); ok {
		return status
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
		fmt.Fprint(stdout, opts.HelpText(version))
		return 0
	case opts.Version:
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if status, done := prepareProcess(opts, args, stderr); done {
		return status
	}
	build := srv.Build{Version: version, Label: buildLabel}
	return srv.Serve(opts, build, srv.NewLogger(stderr, opts.Verbosity), stderr)
}

// prepareProcess does what memcached does before it serves: it raises the
// core file limit (-r) and makes room for -c open files, exiting 71
// (EX_OSERR) when it may not, then daemonizes (-d). done reports that the
// process ends here with status: a refusal, or -d's parent.
func prepareProcess(opts *config.Options, args []string, stderr io.Writer) (status int, done bool) {
	if opts.Proc.CoreDumps {
		if err := procctl.EnsureCoreDumps(); err != nil {
			fmt.Fprintln(stderr, err)
			return 71, true
		}
	}
	if err := procctl.EnsureFileLimit(opts.Reactor.MaxConns); err != nil {
		fmt.Fprintln(stderr, err)
		return 71, true
	}
	if opts.Proc.Daemon && !procctl.InDaemonChild() {
		return procctl.Daemonize(args, opts.Verbosity > 0, stderr), true
	}
	if procctl.InDaemonChild() && !opts.Proc.CoreDumps {
		// memcached's daemon(3) call: the working directory becomes /
		// (kept with -r, for the core file), before any path of the
		// command line (-P, -s, -e, -Y) is used.
		if err := os.Chdir("/"); err != nil {
			fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
			return 1, true
		}
	}
	return 0, false
}
