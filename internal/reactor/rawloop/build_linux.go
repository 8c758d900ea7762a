//go:build linux

package rawloop

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"

	"github.com/gocached/gocached/internal/reactor"
)

// CheckConfig rejects what the raw-descriptor engines cannot serve; name
// prefixes the error.
func CheckConfig(name string, cfg *reactor.Config) error {
	if cfg.TLS != nil {
		return errors.New(name + ": TLS is served by the portable engine (--engine=go)")
	}
	if cfg.NewSession == nil {
		return errors.New(name + ": Config.NewSession is nil")
	}
	return nil
}

// Bindings fills cfg's shared defaults and resolves its TCP listen list
// (none with -s or without TCP); name prefixes the error.
func Bindings(name string, cfg *reactor.Config) ([]reactor.Binding, error) {
	cfg.Epoll.PinCPUs = slices.Clone(cfg.Epoll.PinCPUs)
	if cfg.Backlog <= 0 {
		cfg.Backlog = 1024
	}
	if cfg.UnixSocket != "" || cfg.NoTCP {
		return nil, nil
	}
	addrs, err := reactor.ParseListen(cfg.Listen, cfg.Port)
	if err != nil {
		return nil, reactor.TCPListenError(fmt.Errorf("%s: %w", name, err))
	}
	binds, err := reactor.Bindings(addrs, nil)
	if err != nil {
		return nil, reactor.TCPListenError(fmt.Errorf("%s: %w", name, err))
	}
	return binds, nil
}

// LoopCount is how many loops serve binds: threads (-t) when set, else one
// per NAPI of the listen interface (named by iface), GOMAXPROCS where there
// is none.
func LoopCount(threads int, binds []reactor.Binding) (n int, iface string) {
	if threads > 0 {
		return threads, ""
	}
	ips := make([]net.IP, 0, len(binds))
	for _, b := range binds {
		if !b.Wildcard() {
			ips = append(ips, b.IP)
		}
	}
	if len(ips) != len(binds) {
		ips = nil // a wildcard spans every device: no single NAPI set
	}
	return reactor.AutoReactors(ips)
}

// AddLoops makes n loops with newLoop (which builds each on NewLoop), adds
// them to g's lifecycle and routes connections over them. On failure every
// loop made is released.
func AddLoops[E any, L reactor.Loop](g *Group[E], n int, newLoop func(i int) (L, error)) ([]L, error) {
	loops := make([]L, 0, n)
	for i := range n {
		l, err := newLoop(i)
		if err != nil {
			g.CloseAll()
			return nil, fmt.Errorf("%s: reactor %d: %w", g.Name, i, err)
		}
		g.Add(l)
		loops = append(loops, l)
	}
	ids := make([]*atomic.Uint32, len(g.Loops))
	for i, l := range g.Loops {
		ids[i] = &l.NAPIID
	}
	g.Router = reactor.NewRouter(ids)
	return loops, nil
}

// Listen binds the engine's addresses with tcp, or with unixSocket for -s
// (then nothing else listens), each error marked as memcached's exit
// status wants it. On failure every loop is released.
func (g *Group[E]) Listen(onUnix bool, tcp, unixSocket func() error) error {
	var err error
	if onUnix {
		err = reactor.UnixListenError(unixSocket())
	} else {
		err = reactor.TCPListenError(tcp())
	}
	if err != nil {
		g.CloseAll()
		return err
	}
	g.Acct.AddListeners(len(g.Labels))
	return nil
}
