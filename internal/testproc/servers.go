package testproc

import (
	"fmt"
	"os"
	"os/exec"
)

// RequireEnv set to "1" (CI) means a missing tool or privilege must fail a
// test instead of skipping it.
const RequireEnv = "GOCACHED_REQUIRE_TESTBED"

// Required reports whether RequireEnv is set.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Gocached is the Spec of the gocached binary bin with the given engine
// ("go", "epoll"; "" keeps the binary's default) and flags. Addr (or
// StartOnFreePort) and, where wanted, -l are the caller's.
func Gocached(bin, engine string, flags ...string) Spec {
	name := engine
	if name == "" {
		name = "gocached"
	}
	var args []string
	if engine != "" {
		args = append(args, "--engine="+engine)
	}
	return Spec{Name: name, Path: bin, Args: append(args, flags...)}
}

// Memcached is the Spec of the memcached binary bin with flags. As root it
// adds "-u nobody": memcached refuses to run as root without -u.
func Memcached(bin string, flags ...string) Spec {
	args := append([]string(nil), flags...)
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	return Spec{Name: "memcached", Path: bin, Args: args}
}

// MemcachedBinary finds Debian's memcached on PATH.
func MemcachedBinary() (string, error) {
	p, err := exec.LookPath("memcached")
	if err != nil {
		return "", fmt.Errorf("memcached not installed (Debian package: memcached): %w", err)
	}
	return p, nil
}
