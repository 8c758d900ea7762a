package enginecmp

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// Split divides a gocached server's profiled CPU time into three parts, as
// fractions of the profile's total: time in system calls (the kernel's
// share, which every engine pays), time in the protocol and the store under
// Session.Process (code both engines share), and everything else: the
// engine's own loop plus the Go runtime it drives (scheduler, netpoll, GC).
// Only the last part differs between engines in kind, so it bounds how far
// one engine can get ahead of another.
type Split struct {
	Kernel   float64 `json:"kernel"`
	Protocol float64 `json:"protocol"`
	Engine   float64 `json:"engine"`
}

// sessionProcess is the protocol's entry point; everything below it is
// parsing, reply formatting and the store.
const sessionProcess = "github.com/gocached/gocached/internal/protocol.(*Session).Process"

// isSyscallLeaf reports whether fn is where the Go runtime enters the
// kernel, so that a sample ending there was taken during a system call.
func isSyscallLeaf(fn string) bool {
	return strings.HasSuffix(fn, "/syscall/linux.Syscall6") || // Go 1.21+ runtime entry
		fn == "syscall.RawSyscall6" || fn == "syscall.Syscall6" || fn == "syscall.rawVforkSyscall" ||
		fn == "runtime.futex" || fn == "runtime.epollwait" || fn == "runtime.usleep" ||
		fn == "runtime.nanotime1" || fn == "runtime.write1" || fn == "runtime.read"
}

// SplitProfile reads a CPU profile written by gocached --cpuprofile.
func SplitProfile(path string) (Split, error) {
	f, err := os.Open(path)
	if err != nil {
		return Split{}, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return Split{}, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return splitOf(p)
}

func splitOf(p *profile.Profile) (Split, error) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return Split{}, fmt.Errorf("cpu profile: no cpu sample type")
	}
	var kernel, protocol, total float64
	for _, s := range p.Sample {
		v := float64(s.Value[vi])
		total += v
		var funcs []string
		for _, loc := range s.Location {
			// Inlined calls come first in Line: the leaf is Line[0] of Location[0].
			for _, ln := range loc.Line {
				if ln.Function != nil {
					funcs = append(funcs, ln.Function.Name)
				}
			}
		}
		switch {
		case len(funcs) > 0 && isSyscallLeaf(funcs[0]):
			kernel += v
		case contains(funcs, sessionProcess):
			protocol += v
		}
	}
	if total == 0 {
		return Split{}, fmt.Errorf("cpu profile: no samples")
	}
	return Split{Kernel: kernel / total, Protocol: protocol / total, Engine: (total - kernel - protocol) / total}, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
