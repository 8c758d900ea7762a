// Package cli implements gocached's kernel-facing subcommands: `napi show`,
// `napi set`, `napi apply`, `napi restore` and `doctor`. cmd/gocached hands
// them its arguments through Run.
package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gocached/gocached/internal/napi"
)

// Exit statuses of Run.
const (
	ExitOK    = 0
	ExitFail  = 1 // the operation failed, or doctor found a FAIL
	ExitUsage = 2 // bad command line
)

// Run executes one subcommand. name is the program name used in messages
// (e.g. "gocached"); args start with the subcommand: "napi show ...",
// "napi set ...", "napi apply ...", "napi restore ..." or "doctor ...".
// Errors are written to stderr as one line each; the result is the exit
// status.
//
// Everything runs on the calling goroutine without spawning others, so a
// caller that has locked its OS thread into a network namespace gets answers
// about that namespace.
func Run(name string, args []string, stdout, stderr io.Writer) int {
	e := &env{prog: name, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		return e.usage("missing subcommand: want napi or doctor")
	}
	switch args[0] {
	case "doctor":
		return e.doctor(args[1:])
	case "napi":
		if len(args) < 2 {
			return e.usage("missing napi subcommand: want show, set, apply or restore")
		}
		switch args[1] {
		case "show":
			return e.show(args[2:])
		case "set":
			return e.set(args[2:])
		case "apply":
			return e.apply(args[2:])
		case "restore":
			return e.restore(args[2:])
		case "help", "-h", "--help":
			fmt.Fprintln(stdout, napiHelp)
			return ExitOK
		}
		return e.usage(fmt.Sprintf("unknown napi subcommand %q: want show, set, apply or restore", args[1]))
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, napiHelp)
		return ExitOK
	}
	return e.usage(fmt.Sprintf("unknown subcommand %q: want napi or doctor", args[0]))
}

const napiHelp = `napi show    [--interface NAME] [--json]      list NAPIs, their queues, IRQs and knobs
napi set     --id N [--defer-hard-irqs N] [--gro-flush-timeout NS] [--irq-suspend-timeout NS]
napi apply   --interface NAME --poll-mode M [--state FILE]   set a preset on every NAPI, saving the old values
napi restore --interface NAME [--state FILE]  put back the values saved by apply or the server
doctor       [--interface NAME] [--poll-mode M] [--pin-cpus LIST] [--threads N|auto]`

// env carries a command's output streams.
type env struct {
	prog           string
	stdout, stderr io.Writer
	cmd            string // "napi show", for messages
}

func (e *env) usage(msg string) int {
	fmt.Fprintf(e.stderr, "%s: %s (see %s napi help)\n", e.prog, msg, e.prog)
	return ExitUsage
}

// fail prints err as one line and returns ExitFail.
func (e *env) fail(err error) int {
	fmt.Fprintf(e.stderr, "%s %s: %s\n", e.prog, e.cmd, oneLine(err.Error()))
	return ExitFail
}

// oneLine joins a multi-line message (errors.Join) so each failure stays one
// line on a terminal or in a log.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// flags makes a pflag set that reports parse errors instead of exiting.
func (e *env) flags(cmd string) *pflag.FlagSet {
	e.cmd = cmd
	fs := pflag.NewFlagSet(e.prog+" "+cmd, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are printed by parse as one line
	fs.SortFlags = false
	return fs
}

// parse parses args, returning a non-negative exit status when the command
// should stop (help or a usage error).
func (e *env) parse(fs *pflag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fs.SetOutput(e.stdout)
			fmt.Fprintf(e.stdout, "usage of %s %s:\n", e.prog, e.cmd)
			fs.PrintDefaults()
			return ExitOK, true
		}
		fmt.Fprintf(e.stderr, "%s %s: %s\n", e.prog, e.cmd, err)
		return ExitUsage, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "%s %s: unexpected argument %q\n", e.prog, e.cmd, fs.Arg(0))
		return ExitUsage, true
	}
	return 0, false
}

// lookupInterface resolves name in the caller's network namespace.
func lookupInterface(name string) (*net.Interface, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %q not found in this network namespace (list them with `ip link`)", name)
	}
	return ifi, nil
}

// ifaceNames maps ifindex to interface name for display; unknown indexes
// simply stay out of the map.
func ifaceNames() map[uint32]string {
	out := map[uint32]string{}
	ifs, err := net.Interfaces()
	if err != nil {
		return out
	}
	for _, ifi := range ifs {
		out[uint32(ifi.Index)] = ifi.Name
	}
	return out
}

// dial opens a napi.Client; its errors already say what to do.
func dial() (*napi.Client, error) { return napi.Dial() }
