//go:build unix

package procctl

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// fileLimitHeadroom is how many descriptors beyond -c gocached asks for:
// its own (stdio, the Go runtime's poller, each reactor's epoll fd, eventfd
// and io_uring ring, UDP descriptors, netlink, the -e file) are not
// connections, and -c counts only connections. 384 covers 64 reactors and,
// with -U on the wildcard, 128 UDP descriptors (one per thread per socket).
const fileLimitHeadroom = 384

// errFileLimit is memcached's refusal when it cannot have -c open files.
var errFileLimit = errors.New("failed to set rlimit for open files. Try starting as root or requesting smaller maxconns value.")

// EnsureFileLimit gives the process room for maxConns connections, as
// memcached does before anything else starts. memcached sets RLIMIT_NOFILE
// to exactly -c and exits 71 (EX_OSERR) when it may not; without the check
// gocached would start and later leave clients beyond the limit waiting
// in the listen backlog while accept fails with EMFILE.
//
// The rule memcached's users meet is kept: the start fails only where
// memcached's does, a hard limit below -c that cannot be raised. Where the
// limit can be raised, it is raised to -c plus gocached's own descriptors.
// A limit already above that is left as it is (memcached lowers it to -c,
// which only ever takes descriptors away).
func EnsureFileLimit(maxConns int) error {
	if maxConns <= 0 {
		return nil
	}
	cur, max, err := getFileLimit()
	if err != nil {
		return errors.New("failed to getrlimit number of files")
	}
	want := uint64(maxConns) + fileLimitHeadroom
	if cur >= want {
		return nil
	}
	if max >= want {
		return setFileLimit(want, max)
	}
	if setFileLimit(want, want) == nil {
		return nil
	}
	if max < uint64(maxConns) {
		return errFileLimit
	}
	// Between -c and -c plus the headroom: memcached would run, and so
	// does gocached, with what the hard limit allows.
	return setFileLimit(max, max)
}

// LimitDescriptorsToClients is -o no_maxconns_fast's bound, memcached's
// own: with clients never refused, the open files limit is what stops
// accepting (each engine then pauses its listeners and retries, counting
// listen_disabled_num), and a client beyond it waits in the listen backlog
// until another leaves. memcached's limit is -c descriptors in all; here
// it is -c beyond the descriptors gocached holds once it serves, so that
// -c keeps meaning clients. Call it once every listener is open.
func LimitDescriptorsToClients(maxConns int) error {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := dir.Readdirnames(-1)
	self := int(dir.Fd())
	dir.Close()
	if err != nil {
		return err
	}
	var open []int
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd != self {
			open = append(open, fd)
		}
	}
	_, max, err := getFileLimit()
	if err != nil {
		return err
	}
	want := min(uint64(descriptorLimitFor(open, maxConns)), max)
	return setFileLimit(want, max)
}

// getFileLimit and setFileLimit read and set RLIMIT_NOFILE as uint64s:
// the rlimit fields are uint64 on Linux and the Darwin family but int64 on
// FreeBSD and DragonFly, where RLIM_INFINITY is the largest int64 and so
// survives the round trip.
func getFileLimit() (cur, max uint64, err error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	return uint64(lim.Cur), uint64(lim.Max), nil
}

func setFileLimit(cur, max uint64) error {
	var lim unix.Rlimit
	lim.Cur = rlimitField(lim.Cur, cur)
	lim.Max = rlimitField(lim.Max, max)
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
}

// rlimitField converts v to the platform's field type, named by its first
// argument's type.
func rlimitField[T int64 | uint64](_ T, v uint64) T { return T(v) }

// descriptorLimitFor is the smallest limit below which exactly maxConns
// descriptor numbers are free, given the open ones: a new descriptor takes
// the lowest free number, so clients fill the holes first.
func descriptorLimitFor(open []int, maxConns int) int {
	limit := maxConns
	for {
		below := 0
		for _, fd := range open {
			if fd < limit {
				below++
			}
		}
		if limit-below >= maxConns {
			return limit
		}
		limit = maxConns + below
	}
}
