//go:build unix

package procctl

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// memcached drops root (-u) before it creates anything: its -s socket, its
// -e memory file and its port file belong to the -u user, and opening them
// is checked as that user. gocached keeps root until the listeners are
// bound and the NAPI knobs set, so it creates these files as the user
// where it can (the memory file, before the store maps it) and hands the
// others to the user before the drop (handOver).

// identity is -u's uid and gid when the process will drop to it: running
// as root with -u given. ok is false otherwise, and for an unknown user
// (dropPrivileges refuses that one with memcached's message).
func (p *Process) identity() (uid, gid int, ok bool) {
	if os.Geteuid() != 0 || p.User == "" {
		return 0, 0, false
	}
	uid, gid, err := lookupUser(p.User)
	return uid, gid, err == nil
}

// lookupUser is name's uid and primary gid; an unknown user is ErrNoUser.
func lookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("can't find the user %s to switch to: %w", name, ErrNoUser)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("user %s: bad uid/gid %s/%s", name, u.Uid, u.Gid)
	}
	return uid, gid, nil
}

// ErrMemoryFileOpen is memcached's perror prefix when -e's file cannot be
// opened (memcached then aborts); the error wraps it, the reason follows.
var ErrMemoryFileOpen = errors.New("failed to open file for mmap")

// PrepareMemoryFile opens -e's file as the -u user would, creating it with
// memcached's mode (0700) and owner, so that a file the user may not write
// fails the start as it fails memcached's. Its directory must also let the
// user create the metadata file that a graceful stop writes beside it:
// memcached starts without that and loses the cache at its stop, gocached
// refuses at once instead.
func (p *Process) PrepareMemoryFile(path string) error {
	uid, gid, ok := p.identity()
	if path == "" || !ok {
		return nil
	}
	err := asUserFiles(uid, gid, func() error {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o700)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrMemoryFileOpen, ErrnoText(err))
		}
		f.Close()
		dir := filepath.Dir(path)
		if err := canCreateIn(dir); err != nil {
			return fmt.Errorf("-e %s: user %s cannot create files in %s (%v), so a graceful stop could not save the cache", path, p.User, dir, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return p.HandOver(path) // where asUserFiles could not create it as the user
}

// ReadAsUser reads path with the -u user's rights, as memcached, already
// that user, reads its -Y file.
func (p *Process) ReadAsUser(path string) ([]byte, error) {
	uid, gid, ok := p.identity()
	if !ok {
		return os.ReadFile(path)
	}
	var data []byte
	err := asUserFiles(uid, gid, func() error {
		var err error
		data, err = os.ReadFile(path)
		return err
	})
	return data, err
}

// AsUser runs fn with the -u user's file-system identity when the process
// will drop to it (see asUserFiles), and as the process otherwise: what fn
// creates is the user's, as memcached, already that user, creates it.
func (p *Process) AsUser(fn func() error) error {
	uid, gid, ok := p.identity()
	if !ok {
		return fn()
	}
	return asUserFiles(uid, gid, fn)
}

// HandOver gives the files gocached created as root (the port file, and
// whatever asUserFiles could not create as the user) to the -u user, as
// memcached, already that user, would have created them. A file the user
// owns already is left alone: changing even to the same owner takes
// CAP_CHOWN, which a service confined as Debian's memcached.service is
// (CAP_SETUID, CAP_SETGID, CAP_SYS_RESOURCE) does not have.
func (p *Process) HandOver(paths ...string) error {
	uid, gid, ok := p.identity()
	if !ok {
		return nil
	}
	for _, path := range paths {
		if path == "" {
			continue
		}
		if ownedBy(path, uid, gid) {
			continue
		}
		if err := os.Lchown(path, uid, gid); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("hand %s to %s: %w", path, p.User, err)
		}
	}
	return nil
}

// ownedBy reports whether path (not followed if a link) belongs to uid and gid.
func ownedBy(path string, uid, gid int) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid && int(st.Gid) == gid
}
