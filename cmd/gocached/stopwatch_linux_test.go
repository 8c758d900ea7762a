package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A client that reads nothing must not hold a stop for shutdownGrace:
// memcached exits within a second of SIGTERM, whatever it has not sent.
// A client that does read still gets every reply it asked for before the
// signal.
func TestStopCutsStalledClient(t *testing.T) {
	const size, gets = 512 << 10, 24
	for _, engine := range []string{"epoll", "go", "uring"} {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, "--engine="+engine, "-m", "64")
			dial := func() net.Conn {
				c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				c.SetDeadline(time.Now().Add(30 * time.Second))
				return c
			}
			setter := dial()
			fmt.Fprintf(setter, "set big 0 0 %d\r\n%s\r\n", size, strings.Repeat("v", size))
			if line, err := bufio.NewReader(setter).ReadString('\n'); line != "STORED\r\n" {
				t.Fatalf("set: %q %v", line, err)
			}
			many := strings.Repeat("get big\r\n", gets)
			stalled, reader := dial(), dial()
			if _, err := io.WriteString(stalled, many); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(reader, many); err != nil {
				t.Fatal(err)
			}
			// Both pipelines are read by the server before the signal: the
			// reader's first reply has begun, and so has the stalled
			// client's (its bytes wait, unread, in its receive queue).
			br := bufio.NewReaderSize(reader, 64<<10)
			if _, err := br.Peek(1); err != nil {
				t.Fatal(err)
			}
			waitReceiveQueue(t, stalled)
			start := time.Now()
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			got := 0
			for ; got < gets; got++ {
				line, err := br.ReadString('\n')
				if err != nil || !strings.HasPrefix(line, "VALUE big 0 ") {
					break
				}
				if _, err := br.Discard(size + 2); err != nil {
					break
				}
				if end, _ := br.ReadString('\n'); end != "END\r\n" {
					break
				}
			}
			if code := s.wait(t); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, s.stderr)
			}
			took := time.Since(start)
			if got != gets {
				t.Errorf("the reading client got %d of %d values", got, gets)
			}
			// The server waits up to 10 s; the cut comes a second after output stops.
			if took > 5*time.Second {
				t.Errorf("stop took %v with a client that reads nothing", took.Round(time.Millisecond))
			}
			if !strings.Contains(s.stderr.String(), "were cut") {
				t.Errorf("log lacks the cut:\n%s", s.stderr)
			}
		})
	}
}

// waitReceiveQueue waits until bytes have arrived on c that nobody read
// (SIOCINQ), i.e. the server has begun answering c.
func waitReceiveQueue(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n, ierr := 0, error(nil)
		if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || ierr != nil {
			t.Fatalf("SIOCINQ: %v %v", err, ierr)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not begin answering the stalled client within 30 s")
		}
	}
}
