package server

import (
	"net"
	"testing"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/reactor"
)

func TestSettingsFor(t *testing.T) {
	o, err := config.Parse([]string{"-m", "128", "-M", "-c", "10", "-B", "ascii", "-vv", "-l", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := settingsFor(o, fakeEngine{threads: 3, port: 4242}, "1.6.18-test")
	if s.Threads != 3 || s.Port != 4242 {
		t.Errorf("settingsFor threads/port = %d/%d, want what the engine chose: 3/4242", s.Threads, s.Port)
	}
	if s.Version != "1.6.18-test" || s.MaxBytes != 128<<20 || s.Evictions || !s.CASEnabled || s.MaxConns != 10 ||
		s.BindingProtocol != "ascii" || s.Verbosity.Load() != 2 || s.Interface != "127.0.0.1" || s.ItemSizeMax != 1<<20 {
		t.Errorf("settingsFor = %+v", s)
	}
	o, _ = config.Parse(nil)
	if got := settingsFor(o, fakeEngine{}, "1.6.18-test").BindingProtocol; got != "auto-negotiate" {
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
