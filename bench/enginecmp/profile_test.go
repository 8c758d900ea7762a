package enginecmp

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// stackProfile builds a CPU profile whose samples have the given stacks
// (leaf first) and CPU nanoseconds.
func stackProfile(stacks [][]string, values []int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	funcs := map[string]*profile.Function{}
	for i, st := range stacks {
		var locs []*profile.Location
		for _, name := range st {
			fn := funcs[name]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, values[i]}})
	}
	return p
}

func TestSplitProfile(t *testing.T) {
	p := stackProfile([][]string{
		{"internal/runtime/syscall/linux.Syscall6", "syscall.RawSyscall6", "github.com/gocached/gocached/internal/reactor.writeNonblock"},
		{"github.com/gocached/gocached/internal/store.(*shard).find", "github.com/gocached/gocached/internal/store.(*Store).Get", sessionProcess, "github.com/gocached/gocached/internal/reactor.(*reactor).process"},
		{"runtime.findRunnable", "runtime.schedule"},
		{"runtime.epollwait", "runtime.netpoll", "runtime.findRunnable"},
	}, []int64{500, 300, 150, 50})
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	parsed, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := splitOf(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.Kernel, 0.55) || !near(got.Protocol, 0.30) || !near(got.Engine, 0.15) {
		t.Errorf("split %+v, want kernel .55 protocol .30 engine .15", got)
	}
}

func TestSplitProfileRejectsEmpty(t *testing.T) {
	if _, err := splitOf(stackProfile(nil, nil)); err == nil {
		t.Error("a profile without samples was accepted")
	}
	noCPU := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	if _, err := splitOf(noCPU); err == nil {
		t.Error("a profile without cpu samples was accepted")
	}
}
