package portable

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	return selfSignedFor(t, x509.ExtKeyUsageServerAuth)
}

// selfSignedFor makes a certificate for 127.0.0.1 with the usage given.
func selfSignedFor(t *testing.T, usage x509.ExtKeyUsage) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gocached test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// TestTLS: with Config.TLS every listener serves TLS except a "notls:"
// one; a client that does not complete the handshake is counted and the
// engine goes on serving.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	cfg := reactor.Config{Listen: "127.0.0.1,notls:127.0.0.1:0", TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	s := enginetest.Start(t, New, cfg, enginetest.Options{})
	e := s.Eng.(*engine)
	if len(e.listeners) != 2 || e.listeners[0].tls == nil || e.listeners[1].tls != nil {
		t.Fatalf("listeners %+v, want the first TLS and the notls one plain", e.listeners)
	}
	tc, err := tls.Dial("tcp", s.Addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	tc.Write([]byte("set k 0 0 2\r\nhi\r\nget k\r\n"))
	r := bufio.NewReader(tc)
	for _, want := range []string{"STORED\r\n", "VALUE k 0 2\r\n", "hi\r\n", "END\r\n"} {
		if l, err := r.ReadString('\n'); l != want {
			t.Fatalf("over TLS got %q, %v; want %q", l, err, want)
		}
	}
	plain := enginetest.DialAddr(t, e.listeners[1].ln.Addr().String())
	plain.Send("get k\r\n")
	plain.Expect("VALUE k 0 2\r\n", "hi\r\n", "END\r\n")

	// A plain-text client on the TLS port is closed, not served, and (as in
	// memcached) not counted; a TLS client that fails to negotiate is.
	bad := enginetest.DialAddr(t, s.Addr)
	bad.Send("get k\r\n")
	if l, err := bad.R.ReadString('\n'); err == nil {
		t.Errorf("plain client on the TLS port was answered: %q", l)
	}
	if _, err := tls.Dial("tcp", s.Addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
		t.Fatal("a TLS 1.1 client negotiated with a TLS 1.2 minimum")
	}
	enginetest.WaitFor(t, "one counted handshake error", func() bool { return s.Eng.ServerStats().SSLHandshakeErrors == 1 })
}

// TestTLSListenerPrefixes: whatever the server's own setting (-o
// ssl_verify_mode 0 or 2), an "mtls:" listener refuses a client without a
// certificate the CA signed and serves one with it, and a "btls:" one
// serves a client without any (memcached 1.6.45's ssl_ports.t).
func TestTLSListenerPrefixes(t *testing.T) {
	cert, pool := selfSigned(t)
	clientCert, clientCAs := selfSignedFor(t, x509.ExtKeyUsageClientAuth)
	for _, auth := range []tls.ClientAuthType{tls.NoClientCert, tls.RequireAndVerifyClientCert} {
		server := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
			ClientAuth: auth, ClientCAs: clientCAs}
		s := enginetest.Start(t, New, reactor.Config{Listen: "mtls:127.0.0.1,btls:127.0.0.1:0", TLS: server}, enginetest.Options{})
		e := s.Eng.(*engine)
		mtls, btls := e.listeners[0].ln.Addr().String(), e.listeners[1].ln.Addr().String()
		version := func(addr string, certs []tls.Certificate) (string, error) {
			tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, Certificates: certs})
			if err != nil {
				return "", err
			}
			defer tc.Close()
			tc.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := tc.Write([]byte("version\r\n")); err != nil {
				return "", err
			}
			return bufio.NewReader(tc).ReadString('\n')
		}
		if l, err := version(mtls, nil); err == nil {
			t.Errorf("server auth %v: mtls: a client without a certificate was answered %q", auth, l)
		}
		if l, err := version(mtls, []tls.Certificate{clientCert}); err != nil || l == "" {
			t.Errorf("server auth %v: mtls: a client with a certificate the CA signed: %q, %v", auth, l, err)
		}
		if l, err := version(btls, nil); err != nil || l == "" {
			t.Errorf("server auth %v: btls: a client without a certificate: %q, %v", auth, l, err)
		}
	}
}

// TestTLSProtoErrors: a record that does not decrypt, after the handshake,
// ends the connection and counts one ssl_proto_errors; `stats reset`
// clears it with the handshake errors, as memcached zeroes its stats.
func TestTLSProtoErrors(t *testing.T) {
	cert, pool := selfSigned(t)
	s := enginetest.Start(t, New, reactor.Config{Listen: "127.0.0.1", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, enginetest.Options{})
	raw, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	tc := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if _, err := tc.Write([]byte("version\r\n")); err != nil {
		t.Fatal(err)
	}
	if l, err := bufio.NewReader(tc).ReadString('\n'); err != nil {
		t.Fatalf("version over TLS: %q, %v", l, err)
	}
	// An application-data record of 32 bytes no key encrypted.
	junk := append([]byte{0x17, 0x03, 0x03, 0, 32}, make([]byte, 32)...)
	if _, err := raw.Write(junk); err != nil {
		t.Fatal(err)
	}
	enginetest.WaitFor(t, "one counted TLS protocol error", func() bool { return s.Eng.ServerStats().SSLProtoErrors == 1 })
	if _, err := tls.Dial("tcp", s.Addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}); err == nil {
		t.Fatal("a TLS 1.0 client negotiated")
	}
	enginetest.WaitFor(t, "one counted handshake error", func() bool { return s.Eng.ServerStats().SSLHandshakeErrors == 1 })
	if st := s.Eng.ServerStats(); st.SSLProtoErrors != 1 {
		t.Errorf("proto errors %d after a failed handshake, want still 1", st.SSLProtoErrors)
	}
	s.Eng.(*engine).ResetStats()
	if st := s.Eng.ServerStats(); st.SSLProtoErrors != 0 || st.SSLHandshakeErrors != 0 {
		t.Errorf("after stats reset: proto errors %d, handshake errors %d; want 0 and 0", st.SSLProtoErrors, st.SSLHandshakeErrors)
	}
}

// TestTLSNagleClient: a TLS client that leaves Nagle's algorithm on is
// answered without waiting on the server's delayed ACK (the conformance
// case flow/nagle_client over TLS): its writes are TLS records, and a
// record held back behind an unacknowledged one stalls it as plain bytes
// would (memcached's t/ suite in its TLS mode: binary-extstore.t and
// extstore-overdel.t).
func TestTLSNagleClient(t *testing.T) {
	cert, pool := selfSigned(t)
	s := enginetest.Start(t, New, reactor.Config{Listen: "127.0.0.1", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, enginetest.Options{})
	raw, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	c := enginetest.NewClient(t, tc)
	enginetest.CheckNagleClient(t, c, raw.(*net.TCPConn))
}
