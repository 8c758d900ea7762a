package main

import (
	"fmt"
	"os"
)

// runSubcommand runs `gocached napi ...` and `gocached doctor`, the kernel
// tools of the NAPI control work; until they exist it says so and fails.
func runSubcommand(name string, args []string) int {
	fmt.Fprintf(os.Stderr, "gocached %s: not available yet\n", name)
	return 2
}
