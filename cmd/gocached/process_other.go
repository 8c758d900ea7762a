//go:build !unix

package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

var errNoUser = errors.New("no such user")

func (p *processOptions) prepare(log *slog.Logger) {
	if p.LockMem || p.CoreDumps {
		log.Warn("-k and -r need a Unix system; ignored")
	}
}

func (p *processOptions) dropPrivileges(*slog.Logger, *napiSession) error {
	if p.User != "" {
		return errors.New("-u needs a Unix system")
	}
	return nil
}

// errMemoryFileOpen: see userfiles.go; without -u there is nothing to prepare.
var errMemoryFileOpen = errors.New("failed to open file for mmap")

func (p *processOptions) prepareMemoryFile(string) error { return nil }

func (p *processOptions) handOver(...string) error { return nil }

func (p *processOptions) readAsUser(path string) ([]byte, error) { return os.ReadFile(path) }

func (p *processOptions) writePidFile(log *slog.Logger) func() { return func() {} }

func daemonize(_ []string, _ bool, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gocached: -d needs a Unix system")
	return 1
}

func inDaemonChild() bool { return false }
func notifyDaemonParent() {}

// ensureFileLimit is memcached's RLIMIT_NOFILE rule, which needs Unix.
func ensureFileLimit(int) error { return nil }

// limitDescriptorsToClients is -o no_maxconns_fast's bound, which needs
// Unix's open files limit: without it clients beyond -c are served.
func limitDescriptorsToClients(int) error {
	return errors.New("no open files limit to set on this system")
}

// ensureCoreDumps is memcached's -r, which needs Unix (prepare warns).
func ensureCoreDumps() error { return nil }
