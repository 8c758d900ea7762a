package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	binenc "encoding/binary" // (the tests name the server binary "binary")
	"errors"
	"fmt"
	srv "github.com/gocached/gocached/internal/server"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// pingTimeout bounds `gocached ping` as a container health check, all its
// attempts together (Docker's own timeout in the image is 5 s).
const pingTimeout = 3 * time.Second

// pingEach bounds one way of asking.
const pingEach = time.Second

// ping is `gocached ping [ADDR]`: the image's HEALTHCHECK, which has no
// shell or nc. It exits 0 when the server at ADDR answers, 1 otherwise.
// Without ADDR it asks the port memcached's MEMCACHED_PORT_FILENAME file
// names (the image sets that variable, so a server started with another -p
// is found), else 127.0.0.1:11211; a path is a unix socket.
//
// A health check asks whether the server is up, whatever it was started
// with, so the question is put the ways a server may want it: text
// `version` (-Y answers CLIENT_ERROR until a login, which is an answer
// too), then the binary VERSION (-B binary, -S, which lets VERSION through
// before a login), then TLS (-Z; the certificate is not checked, and a
// server that wants a client certificate says so in an alert, which also
// shows it is up).
func ping(args []string, stdout, stderr io.Writer) int {
	var addr string
	switch len(args) {
	case 0:
		addr = pingDefaultAddr(os.Getenv(srv.PortFileEnv))
	case 1:
		addr = args[0]
	default:
		fmt.Fprintln(stderr, "usage: gocached ping [HOST:PORT|/path/to/socket]")
		return 2
	}
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	deadline := time.Now().Add(pingTimeout)
	var errs []error
	for _, ask := range []func(net.Conn) (string, error){askText, askBinary, askTLS} {
		c, err := net.DialTimeout(network, addr, time.Until(deadline))
		if err != nil {
			fmt.Fprintf(stderr, "gocached ping: %v\n", err)
			return 1 // nothing listens: no other way will find it
		}
		// Each way gets a second at most: a server that does not speak it
		// may wait for more bytes rather than close (-B ascii with the
		// binary header, -B binary with a short text line).
		each := time.Now().Add(pingEach)
		if each.After(deadline) {
			each = deadline
		}
		c.SetDeadline(each)
		answer, err := ask(c)
		c.Close()
		if err == nil {
			fmt.Fprintln(stdout, answer)
			return 0
		}
		errs = append(errs, err)
		if time.Now().After(deadline) {
			break
		}
	}
	fmt.Fprintf(stderr, "gocached ping: %s did not answer: %v\n", addr, errors.Join(errs...))
	return 1
}

// pingDefaultAddr is the address ping asks without one: the first TCP port
// in memcached's port file at path, on the loopback address of its family,
// else memcached's default.
func pingDefaultAddr(path string) string {
	if path != "" {
		if b, err := readPortFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				family, port, ok := strings.Cut(line, ": ")
				switch {
				case !ok:
				case family == "TCP INET":
					return net.JoinHostPort("127.0.0.1", port)
				case family == "TCP INET6":
					return net.JoinHostPort("::1", port)
				}
			}
		}
	}
	return "127.0.0.1:11211"
}

// maxPortFile bounds what ping reads of the port file: memcached's holds a
// line per listener.
const maxPortFile = 64 << 10

// readPortFile reads the port file only when it is a regular file, and
// only its first maxPortFile bytes: a FIFO or device named there by
// mistake would block the health check or feed it without end.
// (Opening a FIFO already blocks, so the file is looked at first.)
func readPortFile(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxPortFile))
}

// askText asks for the version in the text protocol.
func askText(c net.Conn) (string, error) {
	if _, err := io.WriteString(c, "version\r\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case strings.HasPrefix(line, "VERSION "), strings.HasPrefix(line, "CLIENT_ERROR "):
		return strings.TrimSuffix(line, "\r\n"), nil
	case err != nil:
		return "", fmt.Errorf("text: %w", err)
	}
	return "", fmt.Errorf("text: answered %q", line)
}

// askBinary asks for the version in the binary protocol: a 24-byte
// request header with opcode 0x0b and no body.
func askBinary(c net.Conn) (string, error) {
	req := make([]byte, 24)
	req[0], req[1] = 0x80, 0x0b
	if _, err := c.Write(req); err != nil {
		return "", err
	}
	head := make([]byte, 24)
	if _, err := io.ReadFull(c, head); err != nil {
		return "", fmt.Errorf("binary: %w", err)
	}
	if head[0] != 0x81 || head[1] != 0x0b {
		return "", fmt.Errorf("binary: answered % x", head)
	}
	body := make([]byte, min(binenc.BigEndian.Uint32(head[8:12]), 256))
	if _, err := io.ReadFull(c, body); err != nil {
		return "", fmt.Errorf("binary: %w", err)
	}
	if status := binenc.BigEndian.Uint16(head[6:8]); status != 0 {
		return fmt.Sprintf("binary status %#x: %s", status, bytes.TrimSpace(body)), nil
	}
	return "VERSION " + string(body), nil
}

// askTLS asks for the version in the text protocol over TLS. A completed
// handshake already shows the server up: one that wants a client
// certificate ends the connection right after it (with an alert the
// client may not get to read before the reset).
func askTLS(c net.Conn) (string, error) {
	// A liveness probe of the server it was pointed at, not an identity
	// check: the certificate is not verified.
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		return "", fmt.Errorf("tls: %w", err)
	}
	answer, err := askText(tc)
	if err != nil {
		return "TLS handshake done; then " + err.Error(), nil
	}
	return answer, nil
}
