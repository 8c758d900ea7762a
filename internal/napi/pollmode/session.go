// Package pollmode is the server's NAPI poll-mode control: it applies
// --poll-mode's knobs to the listen interface's NAPIs at start, keeps the
// values found for the restore at exit, and runs --poll-mode auto.
package pollmode

import (
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Session is the kernel side of a running server: the netdev client
// (also used to read the knobs back for `stats reactors`) and, when a poll
// mode was applied, where the values found at start are kept.
type Session struct {
	log       *slog.Logger
	client    *napi.Client // nil when the netdev family is unavailable
	applied   *napi.State  // nil when no knob was written
	statePath string
	// Privileged runs the restore where CAP_NET_ADMIN is still held once
	// -u dropped root (procctl keeps one such thread); nil runs it on any
	// thread.
	Privileged func(func() error) error
}

// Start applies the poll mode of o to the NAPIs of the listen interface,
// saving the old values first. When the mode has no NAPI to act on (loopback,
// a wildcard address) it logs one line and switches o to base. A returned
// error is fatal: the server must not start in a mode it cannot set up.
func Start(o *config.Options, log *slog.Logger) (*Session, error) {
	s := &Session{log: log}
	no := &o.NAPI
	if !no.TouchesKernel() {
		s.dialForStats()
		return s, nil
	}
	ifi, why, err := napiInterface(no.Iface, o.Reactor.Listen)
	if err != nil {
		return nil, err
	}
	if ifi == nil {
		s.noNAPI(o, why)
		return s, nil
	}
	if ifi.Flags&net.FlagLoopback != 0 {
		// Loopback never has NAPIs; no need for the netdev family to say so.
		s.noNAPI(o, fmt.Sprintf("%s is a loopback interface", ifi.Name))
		return s, nil
	}
	c, err := napi.Dial()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what(o), err)
	}
	s.client = c
	s.statePath = no.StatePath
	if s.statePath == "" {
		s.statePath = napi.DefaultStatePath(ifi.Name)
	}
	st, err := napi.Apply(c, ifi.Name, ifi.Index, no.Knobs, s.statePath)
	switch {
	case errors.Is(err, napi.ErrNoNAPIs):
		s.noNAPI(o, fmt.Sprintf("interface %s has no NAPI instances", ifi.Name))
		return s, nil
	case errors.Is(err, napi.ErrPermission):
		c.Close()
		return nil, fmt.Errorf("%s: setting the NAPI knobs of %s needs CAP_NET_ADMIN: run as root or grant it (e.g. setcap cap_net_admin+ep), or start without %s",
			s.what(o), ifi.Name, s.flagsUsed(o))
	case errors.Is(err, napi.ErrNoThreadedBusyPoll):
		c.Close()
		return nil, fmt.Errorf("%s on %s: this kernel (%s) lacks threaded busy polling, which came with %s; nothing was changed: choose another --poll-mode (%w)",
			s.what(o), ifi.Name, kernelRelease(), napi.ThreadedBusyPollKernel, err)
	case errors.Is(err, fs.ErrPermission):
		c.Close()
		return nil, fmt.Errorf("%s on %s: %w; pass --napi-state with a writable path", s.what(o), ifi.Name, err)
	case err != nil:
		c.Close()
		return nil, fmt.Errorf("%s on %s: %w", s.what(o), ifi.Name, err)
	}
	s.applied = st
	log.Info("poll mode applied", "mode", o.Reactor.Epoll.PollMode, "interface", ifi.Name, "napis", len(st.NAPIs),
		"knobs", no.Knobs.String(), "state", s.statePath)
	warnInconsistent(o, log)
	return s, nil
}

// what names the request in messages: "--poll-mode suspend20" or the knob
// flags.
func (s *Session) what(o *config.Options) string {
	if o.NAPI.ModeName != "" {
		return "--poll-mode " + o.NAPI.ModeName
	}
	return "NAPI knobs " + o.NAPI.Knobs.String()
}

func (s *Session) flagsUsed(o *config.Options) string {
	if o.NAPI.ModeName != "" {
		return "--poll-mode"
	}
	return "the knob flags"
}

func (s *Session) noNAPI(o *config.Options, why string) {
	requested := o.Reactor.Epoll.PollMode
	o.RunAsBase()
	s.log.Warn("poll mode has no NAPI to act on; running as base", "mode", requested, "reason", why)
	if s.client == nil {
		s.dialForStats() // a wildcard listener may still see NAPI IDs
	}
}

// dialForStats opens the client only to read knobs back for `stats
// reactors`; without the netdev family those lines are simply left out.
func (s *Session) dialForStats() {
	c, err := napi.Dial()
	if err != nil {
		s.log.Debug("netdev genetlink unavailable; stats reactors will not show NAPI knobs", "err", err)
		return
	}
	s.client = c
}

// warnInconsistent points at explicit settings that defeat the mechanism.
func warnInconsistent(o *config.Options, log *slog.Logger) {
	k, rc := o.NAPI.Knobs, &o.Reactor
	suspend, gro, deferIRQs := deref(k.IRQSuspendTimeout), deref(k.GROFlushTimeout), deref(k.DeferHardIRQs)
	if suspend > 0 {
		if !rc.Epoll.PreferBusyPoll {
			log.Warn("irq-suspend-timeout only takes effect while reactors busy poll with prefer_busy_poll; it is off",
				"irq_suspend_timeout_ns", suspend)
		}
		// suspend0 is the upstream comparison point without deferral;
		// anywhere else a zero defer count is most likely a mistake.
		if deferIRQs == 0 && o.NAPI.ModeName != "suspend0" {
			log.Warn("irq-suspend-timeout rides on IRQ deferral: with defer-hard-irqs 0 the kernel re-enables IRQs after every busy-poll round")
		}
		if gro >= suspend {
			log.Warn("irq-suspend-timeout should be larger than gro-flush-timeout: it covers a whole batch of work, the flush timer only the gap between requests",
				"irq_suspend_timeout_ns", suspend, "gro_flush_timeout_ns", gro)
		}
	}
	if o.Engine == "go" && rc.Epoll.PreferBusyPoll {
		log.Warn("the poll mode's epoll busy-poll parameters need --engine=epoll; only the NAPI knobs apply", "mode", rc.Epoll.PollMode)
	}
}

// napiInterface finds the interface a poll mode acts on: --interface, or
// the one holding the -l address(es). It returns nil and a reason when there
// is none to act on (wildcard, loopback-only names), and an error when the
// request cannot be served (unknown --interface, addresses on several
// interfaces).
func napiInterface(name, listen string) (*net.Interface, string, error) {
	if name != "" {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return nil, "", fmt.Errorf("--interface %s: no such interface in this network namespace (list them with `ip link`)", name)
		}
		return ifi, "", nil
	}
	hosts, err := listenHosts(listen)
	if err != nil {
		return nil, "", err
	}
	var found *net.Interface
	for _, h := range hosts {
		ifi, err := napi.InterfaceByAddr(h)
		if errors.Is(err, napi.ErrNoInterface) {
			return nil, err.Error(), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("-l %s: %w; pass --interface", listen, err)
		}
		if found != nil && found.Index != ifi.Index {
			return nil, "", fmt.Errorf("-l %s spans interfaces %s and %s: pass --interface to say whose NAPIs to tune", listen, found.Name, ifi.Name)
		}
		found = ifi
	}
	return found, "", nil
}

// listenHosts are the IP addresses of -l's entries ("" for an empty -l, the
// wildcard), split by the engines' own parser. Host names are resolved;
// every address a name maps to counts.
func listenHosts(listen string) ([]string, error) {
	addrs, err := reactor.ParseListen(listen, 0)
	if err != nil {
		return nil, fmt.Errorf("-l %s: %w", listen, err)
	}
	var hosts []string
	for _, a := range addrs {
		if a.Host == "" {
			hosts = append(hosts, "")
			continue
		}
		if _, err := netip.ParseAddr(a.Host); err == nil {
			hosts = append(hosts, a.Host)
			continue
		}
		ips, err := net.LookupIP(a.Host)
		if err != nil || len(ips) == 0 {
			return nil, fmt.Errorf("-l %s: cannot resolve %s to find its interface: %v; pass --interface", listen, a.Host, err)
		}
		for _, ip := range ips {
			hosts = append(hosts, ip.String())
		}
	}
	return hosts, nil
}

// KeptStatePath is the state file of the knobs this process changed, which
// the -u user must be able to read for the restore; "" when none changed.
func (s *Session) KeptStatePath() string {
	if s == nil || s.applied == nil {
		return ""
	}
	return s.statePath
}

// KnobReader reads one NAPI's knobs back from the kernel, for reactor.Config;
// fields the kernel does not report read as 0.
func (s *Session) KnobReader() func(uint32) (uint32, uint64, uint64, error) {
	if s.client == nil {
		return nil
	}
	c := s.client
	return func(id uint32) (uint32, uint64, uint64, error) {
		n, err := c.NAPI(id)
		if err != nil {
			return 0, 0, 0, err
		}
		return deref(n.DeferHardIRQs), deref(n.GROFlushTimeout), deref(n.IRQSuspendTimeout), nil
	}
}

// Restore puts back the values found at start; it reports failure so the
// exit status can say the kernel was left changed.
func (s *Session) Restore() error {
	if s.applied == nil {
		return nil
	}
	var res napi.RestoreResult
	restore := func() (err error) {
		res, err = napi.Restore(s.client, s.statePath)
		return err
	}
	var err error
	if s.Privileged != nil {
		err = s.Privileged(restore)
	} else {
		err = restore()
	}
	var pe *fs.PathError
	if err != nil && errors.As(err, &pe) && pe.Op == "remove" && errors.Is(err, fs.ErrPermission) {
		// Restored, but -u's user may not remove the file from a directory
		// it does not own. The file still holds the true originals, so a
		// later start or `gocached napi restore` stays correct.
		s.log.Warn("NAPI knobs restored; the state file is left behind", "file", s.statePath, "err", err)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("%w; retry with: gocached napi restore --interface %s --state %s", err, s.applied.Interface, s.statePath)
	}
	s.applied = nil
	s.log.Info("NAPI knobs restored", "interface", res.State.Interface, "napis", len(res.Restored), "gone", len(res.Gone))
	return nil
}

// setKnobs writes one NAPI's knobs (--poll-mode auto), on the thread that
// kept CAP_NET_ADMIN when -u dropped root.
func (s *Session) setKnobs(id uint32, k napi.Knobs) error {
	set := func() error { return s.client.Set(id, k) }
	if s.Privileged != nil {
		return s.Privileged(set)
	}
	return set()
}

// Close releases the netdev client; Restore comes first.
func (s *Session) Close() {
	if s.client != nil {
		s.client.Close()
	}
}

// kernelRelease is uname -r, for messages.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown release"
	}
	return unix.ByteSliceToString(u.Release[:])
}

func deref[T uint32 | uint64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}
