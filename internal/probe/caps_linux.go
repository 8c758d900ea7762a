package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Capability numbers gocached cares about.
const (
	CapNetAdmin = unix.CAP_NET_ADMIN // napi-set, busy-poll budget > 64
	CapSysAdmin = unix.CAP_SYS_ADMIN // setns into the testbed namespaces
)

// EffectiveCaps returns the calling thread's effective capability set as a
// bit mask (bit N = capability N). Capabilities are per thread in Linux, so
// a caller that must get a stable answer runs on a locked thread.
func EffectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		// Fall back to procfs, which reports the same set.
		b, rerr := os.ReadFile("/proc/thread-self/status")
		if rerr != nil {
			return 0, fmt.Errorf("capget: %v; /proc/thread-self/status: %w", err, rerr)
		}
		return ParseCapEff(b)
	}
	return uint64(data[1].Effective)<<32 | uint64(data[0].Effective), nil
}

// ParseCapEff extracts the CapEff mask from the text of /proc/PID/status.
func ParseCapEff(status []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "CapEff" {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("CapEff %q: %w", strings.TrimSpace(val), err)
		}
		return mask, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no CapEff line in status")
}

// HasCap reports whether the calling thread holds capability c effectively.
func HasCap(c int) (bool, error) {
	mask, err := EffectiveCaps()
	if err != nil {
		return false, err
	}
	return mask&(1<<uint(c)) != 0, nil
}

// HasCapNetAdmin says whether this process may use napi-set and busy-poll
// budgets above 64.
func HasCapNetAdmin() Result {
	r := Result{Feature: "CAP_NET_ADMIN"}
	ok, err := HasCap(CapNetAdmin)
	switch {
	case err != nil:
		r.Err = err
		r.Sentence = "cannot read capabilities: " + err.Error()
	case ok:
		r.Supported = true
		r.Sentence = "CAP_NET_ADMIN held: per-NAPI knobs (napi-set) and busy-poll budgets above 64 are allowed"
	default:
		r.Sentence = "no CAP_NET_ADMIN: run as root or grant it (setcap cap_net_admin+ep gocached) to set per-NAPI knobs or a budget above 64"
	}
	return r
}

// WithoutCap runs fn on a locked OS thread whose effective set lacks
// capability c, then restores the set. Capabilities are per thread, so the
// rest of the process keeps its privileges; tests use this to exercise the
// unprivileged paths while running as root. If the restore fails the thread
// stays locked and is discarded when the goroutine ends.
func WithoutCap(c int, fn func() error) error {
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var saved [2]unix.CapUserData
		if err := unix.Capget(&hdr, &saved[0]); err != nil {
			runtime.UnlockOSThread()
			done <- result{fmt.Errorf("capget: %w", err)}
			return
		}
		reduced := saved
		reduced[c/32].Effective &^= 1 << uint(c%32)
		if err := unix.Capset(&hdr, &reduced[0]); err != nil {
			runtime.UnlockOSThread()
			done <- result{fmt.Errorf("capset dropping cap %d: %w", c, err)}
			return
		}
		err := fn()
		if rerr := unix.Capset(&hdr, &saved[0]); rerr != nil {
			// Leave the thread locked: it exits with this goroutine.
			done <- result{fmt.Errorf("restoring capabilities: %w (fn: %v)", rerr, err)}
			return
		}
		runtime.UnlockOSThread()
		done <- result{err}
	}()
	return (<-done).err
}
