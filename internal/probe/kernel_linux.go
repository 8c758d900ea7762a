package probe

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Version is a kernel release's numeric prefix.
type Version struct {
	Major, Minor, Patch int
	Release             string // the full uname -r string
}

func (v Version) String() string {
	if v.Release != "" {
		return v.Release
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// AtLeast reports whether v is major.minor or newer (patch ignored: features
// arrive in mainline x.y.0 releases).
func (v Version) AtLeast(major, minor int) bool {
	if v.Major != major {
		return v.Major > major
	}
	return v.Minor >= minor
}

// ParseRelease reads the leading "X.Y[.Z]" of a uname release such as
// "6.18.44-fc-v1098" or "6.13.0-rc1+".
func ParseRelease(release string) (Version, error) {
	v := Version{Release: release}
	s := release
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(strings.TrimSuffix(s, "."), ".")
	if len(parts) < 2 {
		return v, fmt.Errorf("kernel release %q: want X.Y[.Z]", release)
	}
	nums := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		if i == len(nums) {
			break
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("kernel release %q: bad number %q", release, p)
		}
		*nums[i] = n
	}
	return v, nil
}

// Uname returns the running kernel's version.
func Uname() (Version, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return Version{}, fmt.Errorf("uname: %w", err)
	}
	return ParseRelease(unix.ByteSliceToString(u.Release[:]))
}

// Feature is a kernel capability gocached uses and the mainline release that
// introduced it (see kernel/README.md for the sources).
type Feature struct {
	Name  string
	Major int
	Minor int
	What  string
}

// Features lists what gocached uses, oldest first.
var Features = []Feature{
	{"SO_INCOMING_NAPI_ID", 4, 12, "read a socket's NAPI ID to route it to its reactor"},
	{"SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET", 5, 11, "preferred busy polling per socket"},
	{"netdev genl napi-get", 6, 8, "list NAPIs, their IRQs and queues"},
	{"EPIOCSPARAMS/EPIOCGPARAMS", 6, 9, "busy-poll parameters per epoll context"},
	{"netdev genl napi-set (defer-hard-irqs, gro-flush-timeout)", 6, 13, "per-NAPI IRQ deferral knobs"},
	{"irq-suspend-timeout", 6, 13, "IRQ suspension while the application busy-polls"},
}

// Missing returns the features v predates.
func (v Version) Missing() []Feature {
	var out []Feature
	for _, f := range Features {
		if !v.AtLeast(f.Major, f.Minor) {
			out = append(out, f)
		}
	}
	return out
}

// KernelVersion probes uname and says which of gocached's features the
// release predates.
func KernelVersion() Result {
	v, err := Uname()
	if err != nil {
		return Result{Feature: "kernel", Sentence: "cannot read the kernel release: " + err.Error(), Err: err}
	}
	return kernelResult(v)
}

func kernelResult(v Version) Result {
	missing := v.Missing()
	if len(missing) == 0 {
		return Result{Feature: "kernel", Supported: true,
			Sentence: fmt.Sprintf("kernel %s has every feature gocached uses (IRQ suspension needs 6.13+)", v)}
	}
	names := make([]string, len(missing))
	for i, f := range missing {
		names[i] = fmt.Sprintf("%s (%d.%d)", f.Name, f.Major, f.Minor)
	}
	return Result{Feature: "kernel",
		Sentence: fmt.Sprintf("kernel %s predates %s; upgrade to 6.13 or newer for IRQ suspension", v, strings.Join(names, ", "))}
}
