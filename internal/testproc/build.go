// Package testproc starts real server processes for tests and benchmarks:
// the gocached binary (built once per process) with any engine and flags,
// and Debian's memcached as the reference. It finds free ports, captures the
// server's output, waits (bounded) until the server accepts connections,
// stops it with SIGTERM (SIGKILL after a bound), and reads its memory use
// from /proc. A server can run inside a network namespace (`ip netns exec`)
// with its readiness probed from another one.
//
// The integration suite, bench/enginecmp and bench/scenario all start
// servers; they share this package so that a fix to starting, probing or
// stopping a server lands once.
package testproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// RaceEnv set to "1" builds the gocached binary under the race detector, so
// that end-to-end tests also race-check the server. The name predates this
// package (the integration suite introduced it) and is kept for its users.
const RaceEnv = "GOCACHED_IT_RACE"

// gocachedPkg is the import path of the server's main package.
const gocachedPkg = "github.com/gocached/gocached/cmd/gocached"

// built is the gocached binary of this process, built at most once: every
// test in a package starts servers from the same binary, and a build costs
// tens of seconds on a shared machine.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// GocachedBinary builds ./cmd/gocached into a temporary directory the first
// time it is called and returns the binary's path; later calls return the
// same path (or the same build error). The working directory must be inside
// the gocached module. Call Cleanup when done (TestMain) to remove it.
func GocachedBinary() (string, error) {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "gocached-bin-")
		if err != nil {
			built.err = fmt.Errorf("build gocached: %w", err)
			return
		}
		built.dir = dir
		path := filepath.Join(dir, "gocached")
		var flags []string
		// The shipped build, as the Dockerfile makes it: static, no cgo.
		// A cgo build also differs in a way memcached's own tests notice:
		// glibc opens /sys/devices/system/cpu/online once, when a thread
		// other than the main one first allocates (Go's runtime does so
		// when it starts a thread), and a connection accepted while that
		// descriptor is open gets the next number, out of connection order
		// (watcher_connid.t reads a client's id as the highest fd). The race
		// detector needs cgo, so a race build keeps it.
		env := []string{"CGO_ENABLED=0"}
		if os.Getenv(RaceEnv) == "1" {
			flags = append(flags, "-race")
			env = nil
		}
		if err := goBuild(context.Background(), gocachedPkg, path, env, flags...); err != nil {
			built.err = err
			return
		}
		built.path = path
	})
	return built.path, built.err
}

// Cleanup removes the binary GocachedBinary built, if any. Later calls to
// GocachedBinary fail: call it once, after every user is done.
func Cleanup() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// GoBuild builds package pkg into the binary dst with extra go build flags.
// It runs in the module root so that pkg may be an import path or a path
// relative to the root, from any directory inside the module.
func GoBuild(ctx context.Context, pkg, dst string, flags ...string) error {
	return goBuild(ctx, pkg, dst, nil, flags...)
}

// goBuild is GoBuild with env added to the go command's environment.
func goBuild(ctx context.Context, pkg, dst string, env []string, flags ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	args := append(append([]string{"build", "-o", dst}, flags...), pkg)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = root
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod: tests run in their package's directory, commands wherever the
// user is.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// goTool finds the go command: on PATH, else the toolchain's usual home
// (sudo often drops /usr/local/go/bin from PATH).
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}
