package main

import (
	"context"
	srv "github.com/gocached/gocached/internal/server"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestPingAnswersEveryWay: the image's health check (`gocached ping`, no
// arguments) finds a server on another port through memcached's port file,
// and counts as up a server that wants a login (-Y, -S: binary only), TLS
// (-Z) or even a client certificate (it ends the connection after the
// handshake).
func TestPingAnswersEveryWay(t *testing.T) {
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth")
	if err := os.WriteFile(auth, []byte("alice:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key, _, err := testproc.SelfSignedCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	tlsOpts := "ssl_chain_cert=" + cert + ",ssl_key=" + key
	for _, c := range []struct {
		name string
		args []string
		want string // ping's answer begins so
	}{
		{"plain", nil, "VERSION "},
		{"-Y", []string{"-Y", auth}, "CLIENT_ERROR "},
		{"-B binary", []string{"-B", "binary"}, "VERSION "},
		{"-Z", []string{"-Z", "-o", tlsOpts}, "VERSION "},
		{"-Z wanting a client certificate", []string{"-Z", "-o", tlsOpts + ",ssl_ca_cert=" + cert + ",ssl_verify_mode=2"}, "TLS handshake done; "},
	} {
		t.Run(c.name, func(t *testing.T) {
			portFile := filepath.Join(t.TempDir(), "ports")
			env := append(os.Environ(), srv.PortFileEnv+"="+portFile)
			cmd := testproc.Command(binary, append([]string{"-p", "-1", "-v"}, c.args...)...)
			cmd.Env = env
			startProcess(t, cmd)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p := testproc.CommandContext(ctx, binary, "ping")
			p.Env = env
			out, err := p.Output()
			if err != nil || !strings.HasPrefix(string(out), c.want) {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Errorf("ping: %q, %v (%s); want an answer beginning %q", out, err, stderr, c.want)
			}
		})
	}
}

// TestPingPortFileNotRegular: a port file variable naming a FIFO (or a
// device) must not hold the health check past its bound: ping asks the
// default address instead.
func TestPingPortFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ports")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- pingDefaultAddr(fifo) }()
	select {
	case got := <-done:
		if got != "127.0.0.1:11211" {
			t.Errorf("pingDefaultAddr(a FIFO) = %q, want memcached's default", got)
		}
	case <-time.After(30 * time.Second):
		// It returns at once or blocks for good (opening a FIFO with no
		// writer): a generous bound tells the two apart on a loaded machine.
		t.Fatal("pingDefaultAddr blocked on a FIFO")
	}
}
