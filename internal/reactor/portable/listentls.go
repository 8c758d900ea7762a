package portable

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/gocached/gocached/internal/reactor"
)

// listenerTLS is the TLS configuration of a listener whose -l entry had
// the prefix mode: server's own (-Z and -o ssl_verify_mode) without one,
// none for "notls:", and for "btls:" and "mtls:" the server's with the
// client certificate never asked for, or required and verified against
// -o ssl_ca_cert (memcached's SSL_VERIFY_NONE and SSL_VERIFY_PEER with
// FAIL_IF_NO_PEER_CERT on that listener's connections).
func listenerTLS(server *tls.Config, mode reactor.ListenTLS) *tls.Config {
	if server == nil || mode == reactor.ListenNoTLS {
		return nil
	}
	var auth tls.ClientAuthType
	switch mode {
	case reactor.ListenBasicTLS:
		auth = tls.NoClientCert
	case reactor.ListenPeerTLS:
		auth = tls.RequireAndVerifyClientCert
	default:
		return server
	}
	cfg := server.Clone()
	cfg.ClientAuth = auth
	return cfg
}

// isTLSProtoError reports whether err, from a TLS connection's read or
// write after the handshake, is the TLS layer's own failure (a record
// that does not decrypt or parse, an alert from the peer): memcached
// counts those, OpenSSL's SSL_ERROR_SSL, as ssl_proto_errors, and not an
// orderly close or the socket's own errors.
func isTLSProtoError(err error) bool {
	var header tls.RecordHeaderError
	if errors.As(err, &header) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "local error" || op.Op == "remote error")
}
