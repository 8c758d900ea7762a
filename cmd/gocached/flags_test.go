package main

import (
	"errors"
	"net"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

func TestParseFlagsDefaults(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reactor.Config{
		Port: 11211, MaxConns: 1024, Backlog: 1024, UnixMask: os.ModeSocket | 0o700,
		Epoll: reactor.EpollConfig{BusyPollBudget: 64, MaxEvents: 64, TimeoutMs: -1},
	}
	if !reflect.DeepEqual(o.reactor, want) {
		t.Errorf("reactor config = %+v, want %+v", o.reactor, want)
	}
	if o.reqsPerEvent != 20 {
		t.Errorf("-R default = %d, want 20", o.reqsPerEvent)
	}
	if o.memory != 64<<20 || o.itemSize != 1<<20 || o.noEvict || o.noCAS || o.verbosity != 0 || o.protocol != "auto" {
		t.Errorf("defaults: memory=%d item=%d M=%v C=%v v=%d B=%q", o.memory, o.itemSize, o.noEvict, o.noCAS, o.verbosity, o.protocol)
	}
	wantEngine := "go"
	if runtime.GOOS == "linux" {
		wantEngine = "epoll"
	}
	if o.engine != wantEngine {
		t.Errorf("engine = %q, want %q", o.engine, wantEngine)
	}
}

func TestParseFlagsValues(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(o *options) bool
	}{
		{"short port listen", []string{"-p", "1234", "-l", "127.0.0.1,::1"},
			func(o *options) bool { return o.reactor.Port == 1234 && o.reactor.Listen == "127.0.0.1,::1" }},
		{"long names", []string{"--port=99", "--listen=0.0.0.0", "--conn-limit=7", "--max-reqs-per-event=3", "--listen-backlog=5"},
			func(o *options) bool {
				r := o.reactor
				return r.Port == 99 && r.Listen == "0.0.0.0" && r.MaxConns == 7 && o.reqsPerEvent == 3 && r.Backlog == 5
			}},
		{"memory in MB", []string{"-m", "128"}, func(o *options) bool { return o.memory == 128<<20 }},
		{"memory m suffix", []string{"-m", "128m"}, func(o *options) bool { return o.memory == 128<<20 }},
		{"memory g suffix", []string{"--memory-limit", "2G"}, func(o *options) bool { return o.memory == 2<<30 }},
		{"item size k", []string{"-I", "1536k"}, func(o *options) bool { return o.itemSize == 1536<<10 }},
		{"item size M", []string{"-I", "2M"}, func(o *options) bool { return o.itemSize == 2<<20 }},
		// Below memcached's default largest chunk (512 KB), -I needs a
		// slab_chunk_max that divides it and the 1 MB slab page.
		{"item size bytes", []string{"-I", "65536", "-o", "slab_chunk_max=65536"}, func(o *options) bool { return o.itemSize == 65536 }},
		{"item size 1k minimum", []string{"-I", "1k", "-o", "slab_chunk_max=1024"}, func(o *options) bool { return o.itemSize == 1024 }},
		{"item size 1024m", []string{"-I", "1024m", "-m", "4096"}, func(o *options) bool { return o.itemSize == 1<<30 }},
		{"evictions cas", []string{"-M", "-C"}, func(o *options) bool { return o.noEvict && o.noCAS }},
		{"-vv", []string{"-vv"}, func(o *options) bool { return o.verbosity == 2 }},
		{"-v -v -v", []string{"-v", "-v", "-v"}, func(o *options) bool { return o.verbosity == 3 }},
		{"threads number", []string{"-t", "4"}, func(o *options) bool { return o.reactor.Threads == 4 }},
		{"threads auto", []string{"--threads=auto"}, func(o *options) bool { return o.reactor.Threads == 0 }},
		{"ascii protocol", []string{"-B", "ascii"}, func(o *options) bool { return o.binding == protocol.BindingASCII }},
		{"binary protocol", []string{"-B", "binary"}, func(o *options) bool { return o.binding == protocol.BindingBinary }},
		{"auto protocol", []string{"-B", "auto"}, func(o *options) bool { return o.binding == protocol.BindingAuto }},
		{"sasl", []string{"-S"}, func(o *options) bool { return o.sasl }},
		{"napi ids", []string{"--napi-ids", "4"}, func(o *options) bool { return o.napiIDs == 4 }},
		{"napi ids short", []string{"-N", "2"}, func(o *options) bool { return o.napiIDs == 2 }},
		{"engine go", []string{"--engine=go"}, func(o *options) bool { return o.engine == "go" }},
		{"epoll knobs", []string{"--busy-poll-usecs", "50", "--busy-poll-budget", "16", "--prefer-busy-poll",
			"--max-events", "128", "--epoll-timeout", "1"},
			func(o *options) bool {
				r := o.reactor.Epoll
				return r.BusyPollUsecs == 50 && r.BusyPollBudget == 16 && r.PreferBusyPoll && r.MaxEvents == 128 && r.TimeoutMs == 1
			}},
		{"pin cpus order kept", []string{"--pin-cpus", "3,1"},
			func(o *options) bool { return reflect.DeepEqual(o.reactor.Epoll.PinCPUs, []int{3, 1}) }},
		{"pin cpus", []string{"--pin-cpus", "0,2,4-6"},
			func(o *options) bool { return reflect.DeepEqual(o.reactor.Epoll.PinCPUs, []int{0, 2, 4, 5, 6}) }},
		{"udp zero is fine", []string{"-U", "0"}, func(o *options) bool { return o.udpPort == 0 }},
		{"port zero turns tcp off", []string{"-p", "0"}, func(o *options) bool { return o.reactor.NoTCP }},
		{"port -1 is a free port", []string{"-p", "-1"},
			func(o *options) bool { return !o.reactor.NoTCP && o.reactor.Port == 0 }},
		{"default port serves tcp", nil, func(o *options) bool { return !o.reactor.NoTCP && o.reactor.Port == 11211 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args)
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tt.args, err)
			}
			if !tt.check(o) {
				t.Errorf("parseFlags(%q) = %+v", tt.args, o)
			}
		})
	}
}

func TestParseFlagsErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-U", "-2"}, {"-x"}, {"-I", "1"}, {"--pin-cpus", "-1"}, {"-m", "1k"}} {
		_, err := parseFlags(args)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseFlags(%q) error = %v, want a usageError", args, err)
		}
	}
}

func TestSettingsFor(t *testing.T) {
	o, err := parseFlags([]string{"-m", "128", "-M", "-c", "10", "-B", "ascii", "-vv", "-l", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := settingsFor(o, fakeEngine{threads: 3, port: 4242})
	if s.Threads != 3 || s.Port != 4242 {
		t.Errorf("settingsFor threads/port = %d/%d, want what the engine chose: 3/4242", s.Threads, s.Port)
	}
	if s.Version != version || s.MaxBytes != 128<<20 || s.Evictions || !s.CASEnabled || s.MaxConns != 10 ||
		s.BindingProtocol != "ascii" || s.Verbosity.Load() != 2 || s.Interface != "127.0.0.1" || s.ItemSizeMax != 1<<20 {
		t.Errorf("settingsFor = %+v", s)
	}
	o, _ = parseFlags(nil)
	if got := settingsFor(o, fakeEngine{}).BindingProtocol; got != "auto-negotiate" {
		t.Errorf("binding protocol for -B auto = %q, want memcached's auto-negotiate", got)
	}
}

// fakeEngine reports a thread count and port as a real engine would.
type fakeEngine struct {
	reactor.Engine
	threads, port int
}

func (f fakeEngine) Threads() int   { return f.threads }
func (f fakeEngine) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: f.port} }

// FuzzSizeFlags checks -m and -I never panic and that what the command
// line accepts is in range (the parsers leave the limits to the checks
// after them, as memcached does).
func FuzzSizeFlags(f *testing.F) {
	for _, s := range []string{"64", "1m", "2g", "1k", "1024m", "1025m", "0", "-1", "", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := parseFlags([]string{"--memory-limit=" + s}); err == nil && o.memory < 1<<20 {
			t.Errorf("-m %q = %d, below 1 MB", s, o.memory)
		}
		o, err := parseFlags([]string{"--max-item-size=" + s, "-m", "4096", "-o", "slab_chunk_max=1024"})
		if err == nil && (o.itemSize < minItemSize || o.itemSize > maxItemSize) {
			t.Errorf("-I %q = %d, out of [1k, 1g]", s, o.itemSize)
		}
	})
}
