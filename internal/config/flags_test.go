package config

import (
	"errors"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

func TestParseFlagsDefaults(t *testing.T) {
	o, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reactor.Config{
		Port: 11211, MaxConns: 1024, Backlog: 1024, UnixMask: os.ModeSocket | 0o700,
		Epoll: reactor.EpollConfig{BusyPollBudget: 64, MaxEvents: 64, TimeoutMs: -1},
	}
	if !reflect.DeepEqual(o.Reactor, want) {
		t.Errorf("reactor config = %+v, want %+v", o.Reactor, want)
	}
	if o.ReqsPerEvent != 20 {
		t.Errorf("-R default = %d, want 20", o.ReqsPerEvent)
	}
	if o.Memory != 64<<20 || o.ItemSize != 1<<20 || o.NoEvict || o.NoCAS || o.Verbosity != 0 || o.Protocol != "auto" {
		t.Errorf("defaults: memory=%d item=%d M=%v C=%v v=%d B=%q", o.Memory, o.ItemSize, o.NoEvict, o.NoCAS, o.Verbosity, o.Protocol)
	}
	wantEngine := "go"
	if runtime.GOOS == "linux" {
		wantEngine = "epoll"
	}
	if o.Engine != wantEngine {
		t.Errorf("engine = %q, want %q", o.Engine, wantEngine)
	}
}

func TestParseFlagsValues(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(o *Options) bool
	}{
		{"short port listen", []string{"-p", "1234", "-l", "127.0.0.1,::1"},
			func(o *Options) bool { return o.Reactor.Port == 1234 && o.Reactor.Listen == "127.0.0.1,::1" }},
		{"long names", []string{"--port=99", "--listen=0.0.0.0", "--conn-limit=7", "--max-reqs-per-event=3", "--listen-backlog=5"},
			func(o *Options) bool {
				r := o.Reactor
				return r.Port == 99 && r.Listen == "0.0.0.0" && r.MaxConns == 7 && o.ReqsPerEvent == 3 && r.Backlog == 5
			}},
		{"memory in MB", []string{"-m", "128"}, func(o *Options) bool { return o.Memory == 128<<20 }},
		{"memory m suffix", []string{"-m", "128m"}, func(o *Options) bool { return o.Memory == 128<<20 }},
		{"memory g suffix", []string{"--memory-limit", "2G"}, func(o *Options) bool { return o.Memory == 2<<30 }},
		{"item size k", []string{"-I", "1536k"}, func(o *Options) bool { return o.ItemSize == 1536<<10 }},
		{"item size M", []string{"-I", "2M"}, func(o *Options) bool { return o.ItemSize == 2<<20 }},
		// Below memcached's default largest chunk (512 KB), -I needs a
		// slab_chunk_max that divides it and the 1 MB slab page.
		{"item size bytes", []string{"-I", "65536", "-o", "slab_chunk_max=65536"}, func(o *Options) bool { return o.ItemSize == 65536 }},
		{"item size 1k minimum", []string{"-I", "1k", "-o", "slab_chunk_max=1024"}, func(o *Options) bool { return o.ItemSize == 1024 }},
		{"item size 1024m", []string{"-I", "1024m", "-m", "4096"}, func(o *Options) bool { return o.ItemSize == 1<<30 }},
		{"evictions cas", []string{"-M", "-C"}, func(o *Options) bool { return o.NoEvict && o.NoCAS }},
		{"-vv", []string{"-vv"}, func(o *Options) bool { return o.Verbosity == 2 }},
		{"-v -v -v", []string{"-v", "-v", "-v"}, func(o *Options) bool { return o.Verbosity == 3 }},
		{"threads number", []string{"-t", "4"}, func(o *Options) bool { return o.Reactor.Threads == 4 }},
		{"threads auto", []string{"--threads=auto"}, func(o *Options) bool { return o.Reactor.Threads == 0 }},
		{"ascii protocol", []string{"-B", "ascii"}, func(o *Options) bool { return o.Binding == protocol.BindingASCII }},
		{"binary protocol", []string{"-B", "binary"}, func(o *Options) bool { return o.Binding == protocol.BindingBinary }},
		{"auto protocol", []string{"-B", "auto"}, func(o *Options) bool { return o.Binding == protocol.BindingAuto }},
		{"sasl", []string{"-S"}, func(o *Options) bool { return o.SASL }},
		{"napi ids", []string{"--napi-ids", "4"}, func(o *Options) bool { return o.NAPIIDs == 4 }},
		{"napi ids short", []string{"-N", "2"}, func(o *Options) bool { return o.NAPIIDs == 2 }},
		{"engine go", []string{"--engine=go"}, func(o *Options) bool { return o.Engine == "go" }},
		{"epoll knobs", []string{"--busy-poll-usecs", "50", "--busy-poll-budget", "16", "--prefer-busy-poll",
			"--max-events", "128", "--epoll-timeout", "1"},
			func(o *Options) bool {
				r := o.Reactor.Epoll
				return r.BusyPollUsecs == 50 && r.BusyPollBudget == 16 && r.PreferBusyPoll && r.MaxEvents == 128 && r.TimeoutMs == 1
			}},
		{"pin cpus order kept", []string{"--pin-cpus", "3,1"},
			func(o *Options) bool { return reflect.DeepEqual(o.Reactor.Epoll.PinCPUs, []int{3, 1}) }},
		{"pin cpus", []string{"--pin-cpus", "0,2,4-6"},
			func(o *Options) bool { return reflect.DeepEqual(o.Reactor.Epoll.PinCPUs, []int{0, 2, 4, 5, 6}) }},
		{"udp zero is fine", []string{"-U", "0"}, func(o *Options) bool { return o.UDPPort == 0 }},
		{"port zero turns tcp off", []string{"-p", "0"}, func(o *Options) bool { return o.Reactor.NoTCP }},
		{"port -1 is a free port", []string{"-p", "-1"},
			func(o *Options) bool { return !o.Reactor.NoTCP && o.Reactor.Port == 0 }},
		{"default port serves tcp", nil, func(o *Options) bool { return !o.Reactor.NoTCP && o.Reactor.Port == 11211 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse(tt.args)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if !tt.check(o) {
				t.Errorf("Parse(%q) = %+v", tt.args, o)
			}
		})
	}
}

func TestParseFlagsErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-U", "-2"}, {"-x"}, {"-I", "1"}, {"--pin-cpus", "-1"}, {"-m", "1k"}} {
		_, err := Parse(args)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("Parse(%q) error = %v, want a UsageError", args, err)
		}
	}
}

// FuzzSizeFlags checks -m and -I never panic and that what the command
// line accepts is in range (the parsers leave the limits to the checks
// after them, as memcached does).
func FuzzSizeFlags(f *testing.F) {
	for _, s := range []string{"64", "1m", "2g", "1k", "1024m", "1025m", "0", "-1", "", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := Parse([]string{"--memory-limit=" + s}); err == nil && o.Memory < 1<<20 {
			t.Errorf("-m %q = %d, below 1 MB", s, o.Memory)
		}
		o, err := Parse([]string{"--max-item-size=" + s, "-m", "4096", "-o", "slab_chunk_max=1024"})
		if err == nil && (o.ItemSize < minItemSize || o.ItemSize > maxItemSize) {
			t.Errorf("-I %q = %d, out of [1k, 1g]", s, o.ItemSize)
		}
	})
}
