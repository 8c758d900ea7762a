package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/procctl"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// TLS (-Z) with memcached's -o ssl_* suboptions, on crypto/tls. TLS
// connections are served by the portable engine: a TLS record layer needs
// blocking reads and writes of whole records, which the reactors'
// non-blocking raw-socket loops do not do, so -Z runs --engine=go.

// certHolder loads the certificate and reloads it on refresh_certs; the
// handshakes read the current one without a lock.
type certHolder struct {
	chain, key string
	mu         sync.Mutex // serializes reloads
	cert       atomic.Pointer[tls.Certificate]
	loaded     atomic.Int64
}

func (h *certHolder) Reload() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := h.key
	if key == "" {
		key = h.chain // memcached: the key may be in the chain file
	}
	c, err := tls.LoadX509KeyPair(h.chain, key)
	if err != nil {
		return err
	}
	h.cert.Store(&c)
	h.loaded.Store(time.Now().Unix())
	return nil
}

func (h *certHolder) LoadedUnix() int64 { return h.loaded.Load() }

// tlsLoadError is a certificate, key or CA file -Z cannot use: memcached's
// ssl_init then prints "Error loading the certificate chain: FILE :
// REASON" (the key, the CA certificate) and exits 64 (EX_USAGE), after
// OpenSSL's own error lines, which have no equivalent here.
type tlsLoadError struct {
	what, file string // "the certificate chain", "the key", "the CA certificate"
	cause      error  // what went wrong with the file, for memcached's line
	err        error  // the same, saying which flag, for the log
}

func (e *tlsLoadError) Error() string { return e.err.Error() }
func (e *tlsLoadError) Unwrap() error { return e.err }

// memcachedLine is memcached's line for the failure, with Go's reason.
func (e *tlsLoadError) memcachedLine() string {
	file := e.file
	if file == "" {
		file = "(null)"
	}
	var pe *os.PathError
	reason := e.cause.Error()
	if errors.As(e.cause, &pe) {
		reason = procctl.ErrnoText(pe)
	}
	return fmt.Sprintf("Error loading %s: %s : %s", e.what, file, reason)
}

// tlsLoadFailure says which file a failed Reload could not use, as memcached
// does: the chain when it cannot be read or holds no certificate, else the
// key.
func tlsLoadFailure(t *config.TLS, err error) error {
	wrapped := fmt.Errorf("-Z: loading %s: %w", t.Chain, err)
	b, rerr := os.ReadFile(t.Chain)
	if rerr != nil {
		return &tlsLoadError{what: "the certificate chain", file: t.Chain, cause: rerr, err: fmt.Errorf("-Z: loading %s: %w", t.Chain, rerr)}
	}
	if !bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
		return &tlsLoadError{what: "the certificate chain", file: t.Chain, cause: err, err: wrapped}
	}
	return &tlsLoadError{what: "the key", file: t.Key, cause: err, err: wrapped}
}

// loadTLS builds the server's tls.Config and the stats view of it.
func loadTLS(t *config.TLS, log *slog.Logger) (*tls.Config, *protocol.TLSSettings, error) {
	if !t.Enabled {
		// memcached reports the ssl_* options as given even without -Z.
		return nil, &protocol.TLSSettings{ChainCert: t.Chain, Key: t.Key, CACert: t.CA, VerifyMode: t.VerifyMode,
			MinVersion: t.MinVersion, SessionCache: t.SessionCache, Ciphers: t.Ciphers}, nil
	}
	h := &certHolder{chain: t.Chain, key: t.Key}
	if err := h.Reload(); err != nil {
		return nil, nil, tlsLoadFailure(t, err)
	}
	cfg := &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return h.cert.Load(), nil },
		// memcached's ssl_session_cache turns on resumption; off, a
		// client does a full handshake every time, as there.
		SessionTicketsDisabled: !t.SessionCache,
	}
	cfg.MinVersion = t.MinTLSVersion()
	switch t.VerifyMode {
	case 1:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case 2, 3: // "once" is "require" for a fresh connection
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, nil, &tlsLoadError{what: "the CA certificate", file: t.CA, cause: err, err: fmt.Errorf("-Z: ssl_ca_cert: %w", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, &tlsLoadError{what: "the CA certificate", file: t.CA, cause: errors.New("no PEM certificate"), err: errors.New("-Z: ssl_ca_cert: no PEM certificate in " + t.CA)}
		}
		cfg.ClientCAs = pool
	}
	if t.Ciphers != "" {
		log.Warn("-o ssl_ciphers is OpenSSL's syntax; gocached uses Go's secure cipher suites and ignores it", "ssl_ciphers", t.Ciphers)
	}
	return cfg, &protocol.TLSSettings{ChainCert: t.Chain, Key: t.Key, CACert: t.CA, VerifyMode: t.VerifyMode,
		MinVersion: t.MinVersion, SessionCache: t.SessionCache, Ciphers: t.Ciphers, Certs: h}, nil
}
