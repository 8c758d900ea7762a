//go:build !unix

package procctl

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

var ErrNoUser = errors.New("no such user")

func (p *Process) Prepare(log *slog.Logger) {
	if p.LockMem || p.CoreDumps {
		log.Warn("-k and -r need a Unix system; ignored")
	}
}

func (p *Process) DropPrivileges(*slog.Logger, string) (func(func() error) error, error) {
	if p.User != "" {
		return nil, errors.New("-u needs a Unix system")
	}
	return nil, nil
}

// ErrMemoryFileOpen: see userfiles.go; without -u there is nothing to prepare.
var ErrMemoryFileOpen = errors.New("failed to open file for mmap")

func (p *Process) PrepareMemoryFile(string) error { return nil }

func (p *Process) HandOver(...string) error { return nil }

func (p *Process) ReadAsUser(path string) ([]byte, error) { return os.ReadFile(path) }

func (p *Process) WritePidFile(log *slog.Logger) func() { return func() {} }

func Daemonize(_ []string, _ bool, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gocached: -d needs a Unix system")
	return 1
}

func InDaemonChild() bool { return false }
func NotifyDaemonParent() {}

// EnsureFileLimit is memcached's RLIMIT_NOFILE rule, which needs Unix.
func EnsureFileLimit(int) error { return nil }

// LimitDescriptorsToClients is -o no_maxconns_fast's bound, which needs
// Unix's open files limit: without it clients beyond -c are served.
func LimitDescriptorsToClients(int) error {
	return errors.New("no open files limit to set on this system")
}

// EnsureCoreDumps is memcached's -r, which needs Unix (prepare warns).
func EnsureCoreDumps() error { return nil }
