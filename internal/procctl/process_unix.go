//go:build unix

package procctl

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Prepare applies -k before anything else starts, as memcached does; a
// failure is warned about, not fatal. (-r is checked earlier, with the
// open files limit: see EnsureCoreDumps.)
func (p *Process) Prepare(log *slog.Logger) {
	if p.LockMem {
		if err := lockAllMemory(); err != nil {
			log.Warn("-k: failed to mlockall; proceeding without", "err", err)
		}
	}
}

// EnsureCoreDumps is memcached's -r: the core file limit is raised to
// unlimited, or failing that its soft limit to the hard one, and the start
// fails (memcached's message, status 71) only when the soft limit ends at
// 0, since then no core file could be written.
func EnsureCoreDumps() error {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_CORE, &lim) == nil {
		inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
		if unix.Setrlimit(unix.RLIMIT_CORE, &inf) != nil {
			_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: lim.Max, Max: lim.Max})
		}
	}
	if unix.Getrlimit(unix.RLIMIT_CORE, &lim) != nil || lim.Cur == 0 {
		return errors.New("failed to ensure corefile creation")
	}
	return nil
}

// lockAllMemory is memcached's mlockall(MCL_CURRENT|MCL_FUTURE), made only
// under an unlimited RLIMIT_MEMLOCK (raised to it if allowed): under a
// finite one the lock of the memory there is now may succeed, and then
// the Go runtime dies (status 2) when it next maps memory beyond the
// limit. memcached's lock fails at once there and it goes on unlocked,
// which this does too.
func lockAllMemory() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err != nil {
		return err
	}
	if lim.Cur != unix.RLIM_INFINITY {
		want := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &want); err != nil {
			return fmt.Errorf("RLIMIT_MEMLOCK is %d bytes and cannot be lifted (%v): the process would die when it next grows", lim.Cur, err)
		}
	}
	return unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE)
}

// ErrNoUser is memcached's refusal of an unknown -u user (exit 67, EX_NOUSER).
var ErrNoUser = errors.New("no such user")

// DropPrivileges assumes -u's identity when running as root, after the
// listeners are bound and the NAPI knobs set (both may need root). As in
// memcached, -u is ignored when not root. Without -u, root keeps running:
// memcached refuses ("can't run as root without the -u switch"), gocached
// warns instead so a plain `go run ./cmd/gocached` works for root.
//
// When a poll mode changed the NAPI knobs (napiState names their state
// file; "" when none), one thread keeps CAP_NET_ADMIN (capKeeper) and the
// returned privileged runs the restore at exit on it; the state file is
// handed to the user so the restore can read it. privileged is nil when
// no thread was kept.
func (p *Process) DropPrivileges(log *slog.Logger, napiState string) (privileged func(func() error) error, err error) {
	if os.Geteuid() != 0 {
		if p.User != "" {
			log.Debug("-u ignored: not running as root", "user", p.User)
		}
		return nil, nil
	}
	if p.User == "" {
		log.Warn("running as root without -u; memcached would refuse to start (use -u USER to drop privileges)")
		return nil, nil
	}
	uid, gid, err := lookupUser(p.User)
	if err != nil {
		return nil, err
	}
	var keeper *capKeeper
	if napiState != "" {
		if keeper, err = startCapKeeper(); err != nil {
			return nil, err
		}
		if err := os.Chown(napiState, uid, gid); err != nil {
			return nil, fmt.Errorf("hand the NAPI state file to %s: %w", p.User, err)
		}
	}
	// syscall's Setgroups, Setgid and Setuid change every thread of the
	// process (x/sys's Setgroups only the calling one's, which would leave
	// root's groups on the others). As memcached does, no supplementary
	// group is kept.
	if err := syscall.Setgroups(nil); err != nil {
		return nil, fmt.Errorf("failed to drop supplementary groups: %w", err)
	}
	if err := unix.Setgid(gid); err != nil {
		return nil, fmt.Errorf("failed to assume identity of group %d: %w", gid, err)
	}
	if err := unix.Setuid(uid); err != nil {
		return nil, fmt.Errorf("failed to assume identity of user %s: %w", p.User, err)
	}
	if keeper != nil {
		if err := keeper.keepOnlyNetAdmin(); err != nil {
			return nil, err
		}
		log.Info("dropped privileges; one thread keeps CAP_NET_ADMIN to restore the NAPI knobs at exit", "user", p.User, "uid", uid, "gid", gid)
		return keeper.do, nil
	}
	log.Info("dropped privileges", "user", p.User, "uid", uid, "gid", gid)
	return nil, nil
}

// WritePidFile saves the pid as memcached's save_pid does: a warning when
// the file names a process that still runs, then the pid written to
// FILE.tmp and renamed over FILE, so that a reader (a service manager's
// PIDFile=) never sees it half written, and a file left by another user
// (root's, from a run without -u) is replaced where the directory allows,
// as memcached replaces it. As in memcached, a failure is reported with its
// line and the server keeps running. The returned func removes the file
// unless it names another process by then.
func (p *Process) WritePidFile(log *slog.Logger) (remove func()) {
	if p.PidFile == "" {
		return func() {}
	}
	if b, err := os.ReadFile(p.PidFile); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if pid, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32); err == nil && pid > 0 && syscall.Kill(int(pid), 0) == nil {
			fmt.Fprintf(os.Stderr, "WARNING: The pid file contained the following (running) pid: %d\n", pid)
		}
	}
	tmp := p.PidFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "Could not open the pid file %s for writing: %s\n", tmp, ErrnoText(err))
		log.Error("could not open the pid file for writing", "file", tmp, "err", err)
		return func() {}
	}
	if err := os.Rename(tmp, p.PidFile); err != nil {
		fmt.Fprintf(os.Stderr, "Could not rename the pid file from %s to %s: %s\n", tmp, p.PidFile, ErrnoText(err))
		log.Error("could not rename the pid file", "from", tmp, "to", p.PidFile, "err", err)
		os.Remove(tmp)
		return func() {}
	}
	own := strconv.Itoa(os.Getpid())
	return func() {
		// A stop is not instant (replies in flight are finished first)
		// while the port is already free, so a successor may have
		// written its pid here meanwhile: the file is then its own.
		if b, err := os.ReadFile(p.PidFile); err == nil && strings.TrimSpace(string(b)) != own {
			log.Info("pid file left in place: it names another process now", "file", p.PidFile)
			return
		}
		if err := os.Remove(p.PidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("could not remove the pid file", "file", p.PidFile, "err", err)
		}
	}
}
