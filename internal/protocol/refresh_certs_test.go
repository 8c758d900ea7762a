package protocol

import (
	"errors"
	"testing"
)

type fakeCerts struct {
	err     error
	reloads int
}

func (f *fakeCerts) Reload() error     { f.reloads++; return f.err }
func (f *fakeCerts) LoadedUnix() int64 { return 1 }

// TestRefreshCerts: memcached's replies without TLS, after a reload, and
// when the files no longer load.
func TestRefreshCerts(t *testing.T) {
	env := newSmallEnv(t)
	if got := drive(t, NewSession(env), []byte("refresh_certs\r\n")).out; got != "Error TLS not enabled\r\n" {
		t.Errorf("without -Z: %q", got)
	}
	certs := &fakeCerts{}
	env.Settings.TLS = &TLSSettings{ChainCert: "/etc/c.pem", Certs: certs}
	if got := drive(t, NewSession(env), []byte("refresh_certs\r\n")).out; got != "OK\r\n" || certs.reloads != 1 {
		t.Errorf("reload: %q after %d reloads", got, certs.reloads)
	}
	certs.err = errors.New("tls: failed to find any PEM data in certificate input")
	want := "Error loading the certificate chain: /etc/c.pem : tls: failed to find any PEM data in certificate input\r\n"
	if got := drive(t, NewSession(env), []byte("refresh_certs\r\n")).out; got != want {
		t.Errorf("failed reload: %q, want %q", got, want)
	}
}
