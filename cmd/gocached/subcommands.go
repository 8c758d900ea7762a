package main

import (
	"os"

	"github.com/gocached/gocached/internal/napi/cli"
)

// runSubcommand runs `gocached napi ...` and `gocached doctor ...`, the
// kernel tools of internal/napi/cli, and returns their exit status.
func runSubcommand(name string, args []string) int {
	return cli.Run("gocached", append([]string{name}, args...), os.Stdout, os.Stderr)
}
