package integration

import (
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// recordingConn keeps every byte read from the server, so a test can look
// at the TLS records under a tls.Client.
type recordingConn struct {
	net.Conn
	mu   sync.Mutex
	read []byte
}

func (r *recordingConn) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.mu.Lock()
	r.read = append(r.read, b[:n]...)
	r.mu.Unlock()
	return n, err
}

// lastRecordType walks the TLS records in b and returns the content type
// of the last complete one (0 when there is none).
func lastRecordType(b []byte) byte {
	var last byte
	for len(b) >= 5 {
		n := 5 + (int(b[3])<<8 | int(b[4]))
		if len(b) < n {
			break
		}
		last, b = b[0], b[n:]
	}
	return last
}

// TestTLSCloseNotify: a TLS connection the server ends (here an idle kick,
// then quit) ends with a close_notify alert before the FIN, as memcached's
// SSL_shutdown does. A client that sees the stream cut without one, such
// as perl's IO::Socket::SSL in memcached's idle-timeout.t, takes the
// connection for broken and writes into the reset. TLS 1.2 keeps the
// alert's record type (21) visible on the wire.
func TestTLSCloseNotify(t *testing.T) {
	certFile, keyFile, pool := writeTestCert(t)
	runTargets(t, []target{{name: "go", engine: "go"}, referenceTarget}, func(t *testing.T, tg target) {
		srv := startServer(t, tg, "-Z", "-o", "ssl_chain_cert="+certFile+",ssl_key="+keyFile+",idle_timeout=1")
		addr := "127.0.0.1:" + strconv.Itoa(srv.Port())
		for _, how := range []string{"idle", "quit"} {
			raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			rc := &recordingConn{Conn: raw}
			c := tls.Client(rc, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12})
			c.SetDeadline(time.Now().Add(15 * time.Second))
			if _, err := c.Write([]byte("version\r\n")); err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			buf := make([]byte, 64)
			if n, err := c.Read(buf); err != nil || string(buf[:n]) == "" {
				t.Fatalf("%s: version: %q, %v", how, buf[:n], err)
			}
			if how == "quit" {
				c.Write([]byte("quit\r\n"))
			}
			if n, err := c.Read(buf); err != io.EOF {
				t.Fatalf("%s: read after the server's end: %q, %v; want io.EOF", how, buf[:n], err)
			}
			rc.mu.Lock()
			typ := lastRecordType(rc.read)
			rc.mu.Unlock()
			if typ != 21 {
				t.Errorf("%s: the last record from the server has type %d; want 21 (alert: close_notify)", how, typ)
			}
			c.Close()
		}
	})
}
