package server

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/testproc"
)

// TestHangupReloadsCertificate: with -Z, SIGHUP reloads the certificate
// from its files, as memcached 1.6.40 and later do: a new certificate
// written over the old one is what the next handshake gets.
func TestHangupReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _, err := testproc.SelfSignedCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	portFile := filepath.Join(t.TempDir(), "ports")
	t.Setenv(PortFileEnv, portFile)
	o, err := config.Parse([]string{"-l", "127.0.0.1", "-p", "-1", "-A", "-Z",
		"-o", "ssl_chain_cert=" + certFile + ",ssl_key=" + keyFile})
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Serve(o, Build{Version: "1.6.45"}, slog.New(slog.NewTextHandler(&stderr, nil)), &stderr)
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", waitPort(t, portFile, done))
	served := func() []byte {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Raw
	}
	old := served()
	if _, _, _, err := testproc.SelfSignedCert(dir); err != nil { // a new pair over the old files
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for bytes.Equal(served(), old) {
		if time.Now().After(deadline) {
			t.Fatalf("the old certificate is still served 30 s after SIGHUP; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("shutdown\r\n"))
	c.Close()
	select {
	case status := <-done:
		if status != 0 {
			t.Errorf("Serve = %d after shutdown; stderr:\n%s", status, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Serve did not return within 30 s of shutdown")
	}
}
