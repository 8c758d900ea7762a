package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/napi/cli"
)

// runSubcommand runs `gocached napi|doctor|ping|man ...` and returns its
// exit status; ok is false when args name no subcommand (a server's
// command line).
func runSubcommand(args []string, stdout, stderr io.Writer) (status int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "napi", "doctor":
		// The kernel tools of internal/napi/cli.
		return cli.Run("gocached", args, os.Stdout, os.Stderr), true
	case "ping":
		return ping(args[1:], stdout, stderr), true
	case "man":
		o, err := config.Parse(nil)
		if err != nil {
			fmt.Fprintf(stderr, "gocached: %v\n", err)
			return 1, true
		}
		fmt.Fprint(stdout, config.ManPage(o.Flags, version))
		return 0, true
	}
	return 0, false
}
