package server

import (
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"io"
	"log/slog"
	"strings"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// listenFailureStatus is memcached's EX_OSERR, its status when a listener
// cannot be set up.
const listenFailureStatus = 71

// reportListenFailure writes memcached's line for a listener that could not
// be set up (a port in use, an -l address not on this host, a -s path in a
// missing directory), then logs the error itself, which names the address
// and port, and reports true; other errors are left to the caller.
func reportListenFailure(w io.Writer, log *slog.Logger, o *config.Options, err error) bool {
	var le *reactor.ListenError
	if !errors.As(err, &le) {
		return false
	}
	port := o.Reactor.Port
	if le.Transport == "udp" {
		port = o.UDPPort
	}
	fmt.Fprintln(w, le.MemcachedMessage(o.Reactor.Listen, port, o.Reactor.UnixSocket))
	log.Error("cannot start", "err", err)
	return true
}

// refuseListenEntries makes memcached's checks of the -l entries, in its
// order (server_sockets, entry by entry, each before it is bound): a TLS
// prefix ("notls:", "btls:", "mtls:") without -Z, and a "proto[binary]:"
// listener beside -Y's ASCII authentication. It writes memcached's line, then its listen
// failure with errno 0 (ListenSpecError's rendering), and reports the
// refusal for the log; "" when the start goes on. With -Y, a
// "proto[negotiating]:" listener serves ASCII, with memcached's warning.
func refuseListenEntries(w io.Writer, o *config.Options, tlsOn bool) (refusal string) {
	if o.Reactor.NoTCP || o.Reactor.UnixSocket != "" {
		return ""
	}
	addrs, err := reactor.ParseListen(o.Reactor.Listen, o.Reactor.Port)
	if err != nil {
		return ""
	}
	auth := o.Gates.AuthFile != ""
	for _, a := range addrs {
		line := ""
		switch {
		case a.TLS != reactor.ListenTLSDefault && !tlsOn:
			line = tlsPrefixWithoutTLS(a.TLS)
		case a.Proto == "binary" && auth:
			line = binaryBesideAuth
		case a.Proto == "negotiating" && auth:
			fmt.Fprintln(w, negotiatingBesideAuth)
		}
		if line != "" {
			le := &reactor.ListenError{Transport: "tcp", Err: &reactor.ListenSpecError{Line: line}}
			fmt.Fprintln(w, le.MemcachedMessage(o.Reactor.Listen, o.Reactor.Port, ""))
			return line
		}
	}
	return ""
}

// tlsPrefixWithoutTLS is memcached's line for a TLS prefix without -Z.
// Its "mtls" check names "otls", as memcached 1.6.45 prints it.
func tlsPrefixWithoutTLS(m reactor.ListenTLS) string {
	name := m.Prefix()
	if m == reactor.ListenPeerTLS {
		name = "otls"
	}
	return "'" + name + "' option is valid only when SSL is enabled"
}

// memcached 1.6.43 and later (its fix of an ASCII authentication bypass)
// refuse a binary listener with -Y, which would serve the binary protocol
// with no authentication at all, and serve ASCII on a negotiating one.
// gocached reads every -Y connection as ASCII whatever its listener (see
// protocol.Session), so neither was a way around the login; the start-up
// is memcached's, so that a command line starts on both or on neither.
const (
	binaryBesideAuth      = "Cannot use binary protocol when ascii authentication enabled"
	negotiatingBesideAuth = "WARNING: negotiating ports are ascii only when ascii authentication enabled"
)

// listenerProtocols is the per-listener protocol of -l entries with
// memcached's "proto[...]:" prefix (protocol.Env.ListenerBinding), nil when
// there are none. The engines have bound these addresses already, so the
// list parses and resolves; a -p -1 port picked at bind is not known here,
// and such a listener serves -B's protocol.
func listenerProtocols(o *config.Options) func(fd int) (protocol.Binding, bool) {
	if o.Reactor.UnixSocket != "" || !strings.Contains(o.Reactor.Listen, "proto[") {
		return nil
	}
	addrs, err := reactor.ParseListen(o.Reactor.Listen, o.Reactor.Port)
	if err != nil {
		return nil
	}
	binds, err := reactor.Bindings(addrs, nil)
	if err != nil {
		return nil
	}
	return reactor.ListenerProtocols(binds)
}
