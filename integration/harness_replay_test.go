package integration

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// halfCloser is a stream a script can end with a half-close: TCP's FIN,
// or TLS's close_notify.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// tlsDiffAddrs holds the addresses of servers replayPair started with -Z
// (GOCACHED_DIFF_TLS=1): dialScript speaks TLS to them.
var tlsDiffAddrs sync.Map

// scriptConn is a client connection for replaying a script: a goroutine
// gathers every byte the server sends until it closes, so the writer can
// look at the replies so far (to expand CAS values or wait for a marker)
// without blocking on them.
type scriptConn struct {
	halfCloser
	deadline time.Time

	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

// dialScript connects to addr with Nagle off and a deadline limit away for
// the whole script.
func dialScript(addr string, limit time.Duration) (*scriptConn, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	conn.(*net.TCPConn).SetNoDelay(true)
	var hc halfCloser = conn.(*net.TCPConn)
	if _, ok := tlsDiffAddrs.Load(addr); ok {
		hc = tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) // the test's own throwaway certificate
	}
	c := &scriptConn{halfCloser: hc, deadline: time.Now().Add(limit), done: make(chan error, 1)}
	c.SetDeadline(c.deadline)
	go c.gather()
	return c, nil
}

func (c *scriptConn) gather() {
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		c.mu.Lock()
		c.out.Write(buf[:n])
		c.mu.Unlock()
		if err != nil {
			if err == io.EOF || isReset(err) {
				err = nil
			}
			c.done <- err
			return
		}
	}
}

// replies returns a copy of what the server sent so far.
func (c *scriptConn) replies() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.out.Bytes()...)
}

// finish half-closes the connection, waits for the server to close its
// side and returns all it sent.
func (c *scriptConn) finish() ([]byte, error) {
	c.CloseWrite()
	err := <-c.done
	c.Close()
	if err != nil {
		return c.replies(), fmt.Errorf("reading replies: %v", err)
	}
	return c.replies(), nil
}
