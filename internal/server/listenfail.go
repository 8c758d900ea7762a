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

// refuseNoTLS refuses, as memcached does, an -l entry with the "notls:"
// prefix when TLS is off: memcached's line, then its listen failure with
// errno 0 (ListenSpecError's rendering), and EX_OSERR. It reports whether
// it did.
func refuseNoTLS(w io.Writer, o *config.Options, tlsOn bool) bool {
	if tlsOn || o.Reactor.Port == 0 || o.Reactor.UnixSocket != "" {
		return false
	}
	addrs, err := reactor.ParseListen(o.Reactor.Listen, o.Reactor.Port)
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if a.NoTLS {
			le := &reactor.ListenError{Transport: "tcp", Err: &reactor.ListenSpecError{Line: "'notls' option is valid only when SSL is enabled"}}
			fmt.Fprintln(w, le.MemcachedMessage(o.Reactor.Listen, o.Reactor.Port, ""))
			return true
		}
	}
	return false
}

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
