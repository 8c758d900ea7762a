package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
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

// tlsOptions are -Z and the ssl_* suboptions.
type tlsOptions struct {
	enabled bool // -Z
	chain, key, ca, ciphers,
	minVersion string
	verifyMode   int
	sessionCache bool
}

// minVersions maps ssl_min_version's values (memcached takes 0-3) to Go's.
var minVersions = []struct {
	name    string
	version uint16
}{{"tlsv1.0", tls.VersionTLS10}, {"tlsv1.1", tls.VersionTLS11}, {"tlsv1.2", tls.VersionTLS12}, {"tlsv1.3", tls.VersionTLS13}}

// fromExt reads the ssl_* suboptions, with memcached's defaults.
func (t *tlsOptions) fromExt(settings []extSetting) error {
	t.minVersion = "tlsv1.2"
	for _, s := range settings {
		switch s.name {
		case "ssl_chain_cert":
			t.chain = s.value
		case "ssl_key":
			t.key = s.value
		case "ssl_ca_cert":
			t.ca = s.value
		case "ssl_ciphers":
			t.ciphers = s.value
		case "ssl_session_cache":
			t.sessionCache = true
		case "ssl_verify_mode":
			n := extInt([]extSetting{s}, s.name, -1)
			if n < 0 || n > 3 {
				return usagef("ssl_verify_mode must be 0 (none), 1 (request), 2 (require) or 3 (once)")
			}
			t.verifyMode = n
		case "ssl_min_version":
			n := extInt([]extSetting{s}, s.name, -1)
			if n < 0 || n > 3 {
				return usagef("ssl_min_version must be 0 (tlsv1.0) to 3 (tlsv1.3)")
			}
			t.minVersion = minVersions[n].name
		case "ssl_keyformat":
			if extInt([]extSetting{s}, s.name, 1) != 1 {
				return refusef("ssl_keyformat: gocached reads PEM keys only (1)") // memcached takes DER (2) too
			}
		}
	}
	if t.enabled && t.chain == "" {
		return usagef("-Z needs a certificate: -o ssl_chain_cert=FILE[,ssl_key=FILE]")
	}
	return nil
}

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
		reason = errnoText(pe)
	}
	return fmt.Sprintf("Error loading %s: %s : %s", e.what, file, reason)
}

// loadFailure says which file a failed Reload could not use, as memcached
// does: the chain when it cannot be read or holds no certificate, else the
// key.
func (t *tlsOptions) loadFailure(err error) error {
	wrapped := fmt.Errorf("-Z: loading %s: %w", t.chain, err)
	b, rerr := os.ReadFile(t.chain)
	if rerr != nil {
		return &tlsLoadError{what: "the certificate chain", file: t.chain, cause: rerr, err: fmt.Errorf("-Z: loading %s: %w", t.chain, rerr)}
	}
	if !bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
		return &tlsLoadError{what: "the certificate chain", file: t.chain, cause: err, err: wrapped}
	}
	return &tlsLoadError{what: "the key", file: t.key, cause: err, err: wrapped}
}

// config builds the server's tls.Config and the stats view of it.
func (t *tlsOptions) config(log *slog.Logger) (*tls.Config, *protocol.TLSSettings, error) {
	if !t.enabled {
		// memcached reports the ssl_* options as given even without -Z.
		return nil, &protocol.TLSSettings{ChainCert: t.chain, Key: t.key, CACert: t.ca, VerifyMode: t.verifyMode,
			MinVersion: t.minVersion, SessionCache: t.sessionCache, Ciphers: t.ciphers}, nil
	}
	h := &certHolder{chain: t.chain, key: t.key}
	if err := h.Reload(); err != nil {
		return nil, nil, t.loadFailure(err)
	}
	cfg := &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return h.cert.Load(), nil },
		// memcached's ssl_session_cache turns on resumption; off, a
		// client does a full handshake every time, as there.
		SessionTicketsDisabled: !t.sessionCache,
	}
	for _, v := range minVersions {
		if v.name == t.minVersion {
			cfg.MinVersion = v.version
		}
	}
	switch t.verifyMode {
	case 1:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case 2, 3: // "once" is "require" for a fresh connection
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if t.ca != "" {
		pem, err := os.ReadFile(t.ca)
		if err != nil {
			return nil, nil, &tlsLoadError{what: "the CA certificate", file: t.ca, cause: err, err: fmt.Errorf("-Z: ssl_ca_cert: %w", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, &tlsLoadError{what: "the CA certificate", file: t.ca, cause: errors.New("no PEM certificate"), err: errors.New("-Z: ssl_ca_cert: no PEM certificate in " + t.ca)}
		}
		cfg.ClientCAs = pool
	}
	if t.ciphers != "" {
		log.Warn("-o ssl_ciphers is OpenSSL's syntax; gocached uses Go's secure cipher suites and ignores it", "ssl_ciphers", t.ciphers)
	}
	return cfg, &protocol.TLSSettings{ChainCert: t.chain, Key: t.key, CACert: t.ca, VerifyMode: t.verifyMode,
		MinVersion: t.minVersion, SessionCache: t.sessionCache, Ciphers: t.ciphers, Certs: h}, nil
}
