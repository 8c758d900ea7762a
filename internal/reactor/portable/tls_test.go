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
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gocached test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
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
	if len(e.listeners) != 2 || !e.listeners[0].tls || e.listeners[1].tls {
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
