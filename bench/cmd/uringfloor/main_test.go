//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/bench/floor"
	"github.com/gocached/gocached/internal/testproc"
	"golang.org/x/sys/unix"
)

// TestSIGTERMFreesThePort: once the process has exited after SIGTERM its
// port can be listened on again at once, as enginecmp's next target does.
// A plain exit left the port in use in 20 runs of 20 (the multishot accept
// held the listening socket until the ring's asynchronous teardown).
func TestSIGTERMFreesThePort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	bin := filepath.Join(t.TempDir(), "uringfloor")
	if err := testproc.GoBuild(t.Context(), "github.com/gocached/gocached/bench/cmd/uringfloor", bin); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		port := freePort(t)
		cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(port))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := oneGet(port); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: %v", round, err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("round %d: exit: %v", round, err)
		}
		lfd, err := floor.Listen([4]byte{127, 0, 0, 1}, port)
		if err != nil {
			t.Fatalf("round %d: port %d after exit: %v", round, port, err)
		}
		unix.Close(lfd)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// oneGet connects (retrying until the server listens, at most 10 s) and
// reads one get's reply line.
func oneGet(port int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			if time.Now().After(deadline) {
				return err
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		defer c.Close()
		c.SetDeadline(deadline)
		fmt.Fprintf(c, "get k\r\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "VALUE k 0 100\r\n" {
			return fmt.Errorf("reply %q: %v", line, err)
		}
		return nil
	}
}
