//go:build linux

package main

import (
	"github.com/gocached/gocached/internal/config"
	srv "github.com/gocached/gocached/internal/server"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestPortFile: with MEMCACHED_PORT_FILENAME set, the server writes its
// bound ports as memcached does ("TCP INET: N", "UDP INET: N"); -p -1 and
// -U -1 pick free ports, and the TCP one written is the one that answers.
func TestPortFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ports")
	cmd := testproc.Command(binary, "-l", "127.0.0.1", "-p", "-1", "-U", "-1", "-v")
	cmd.Env = append(os.Environ(), srv.PortFileEnv+"="+file)
	s := startProcess(t, cmd)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("port file: %v; log:\n%s", err, s.stderr)
	}
	if _, err := os.Stat(file + ".lck"); !os.IsNotExist(err) {
		t.Errorf("temporary %s.lck left behind: %v", file, err)
	}
	re := regexp.MustCompile(`^(TCP|UDP) INET: ([1-9][0-9]*)$`)
	ports := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("port file line %q in %q", l, b)
		}
		ports[m[1]] = m[2]
	}
	if ports["TCP"] == "" || ports["UDP"] == "" || ports["TCP"] == "11211" {
		t.Fatalf("port file %q: want a free TCP and UDP port each", b)
	}
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+ports["TCP"], 5*time.Second)
	if err != nil {
		t.Fatalf("the TCP port written does not answer: %v", err)
	}
	nc.Close()
	if "127.0.0.1:"+ports["TCP"] != s.addr {
		t.Errorf("port file names %s, the server serves %s", ports["TCP"], s.addr)
	}
}

// TestPortFileNotWrittenForUnixSocket: with -s memcached listens on no
// port and writes no port file, not even an empty one.
func TestPortFileNotWrittenForUnixSocket(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ports")
	cmd := testproc.Command(binary, "-s", filepath.Join(dir, "mc.sock"), "-v")
	cmd.Env = append(os.Environ(), srv.PortFileEnv+"="+file)
	s := startProcess(t, cmd)
	for _, f := range []string{file, file + ".lck"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v); log:\n%s", f, err, s.stderr)
		}
	}
}

// TestUDPPortAloneSetsTCPPort: as in memcached, -U N without -p serves TCP
// on port N too.
func TestUDPPortAloneSetsTCPPort(t *testing.T) {
	port, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	o, err := config.Parse([]string{"-U", itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Reactor.Port != port || o.UDPPort != port {
		t.Errorf("-U %d alone: TCP port %d, UDP port %d; want both %d", port, o.Reactor.Port, o.UDPPort, port)
	}
	if o, err := config.Parse([]string{"-U", itoa(port), "-p", "11300"}); err != nil || o.Reactor.Port != 11300 {
		t.Errorf("-U with -p: TCP port %v (%v), want 11300", o, err)
	}
}

// TestStatsConnsListsUDP: with -U, `stats conns` lists the UDP socket as
// memcached does ("N:UDP UDP", its udp: address, conn_read).
func TestStatsConnsListsUDP(t *testing.T) {
	for _, engine := range []string{"epoll", "go", "uring"} {
		t.Run(engine, func(t *testing.T) {
			port, err := freeTCPPort()
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, "--engine="+engine, "-U", itoa(port))
			nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			nc.Write([]byte("stats conns\r\n"))
			var b strings.Builder
			buf := make([]byte, 4096)
			for !strings.HasSuffix(b.String(), "END\r\n") {
				n, err := nc.Read(buf)
				if err != nil {
					t.Fatalf("stats conns: %v after %q", err, b.String())
				}
				b.Write(buf[:n])
			}
			out := b.String()
			m := regexp.MustCompile(`STAT (\d+):UDP UDP\r\nSTAT (\d+):addr udp:127\.0\.0\.1:(\d+)\r\nSTAT (\d+):state conn_read\r\n`).FindStringSubmatch(out)
			if m == nil || m[1] != m[2] || m[2] != m[4] || m[3] != itoa(port) {
				t.Errorf("stats conns lacks the UDP socket on port %d:\n%s", port, out)
			}
		})
	}
}

// TestPortZeroTurnsTCPOff: memcached's -p 0 serves no TCP at all. With -U -1
// beside it the port file holds only a UDP line, `stats settings` says
// tcpport 0, and UDP answers; on every engine.
func TestPortZeroTurnsTCPOff(t *testing.T) {
	for _, engine := range []string{"epoll", "go", "uring"} {
		t.Run(engine, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ports")
			cmd := testproc.Command(binary, "--engine="+engine, "-l", "127.0.0.1", "-p", "0", "-U", "-1", "-v")
			cmd.Env = append(os.Environ(), srv.PortFileEnv+"="+file)
			startProcess(t, cmd)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("port file: %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			m := regexp.MustCompile(`^UDP INET: ([1-9][0-9]*)$`).FindStringSubmatch(lines[0])
			if len(lines) != 1 || m == nil {
				t.Fatalf("port file %q: want one UDP line and no TCP", b)
			}
			uc, err := net.Dial("udp", "127.0.0.1:"+m[1])
			if err != nil {
				t.Fatal(err)
			}
			defer uc.Close()
			// The UDP frame header: request id 7, sequence 0, 1 datagram.
			req := append([]byte{0, 7, 0, 0, 0, 1, 0, 0}, "stats settings\r\n"...)
			if _, err := uc.Write(req); err != nil {
				t.Fatal(err)
			}
			uc.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 65536)
			n, err := uc.Read(buf)
			if err != nil {
				t.Fatalf("no UDP answer: %v", err)
			}
			if reply := string(buf[8:n]); !strings.Contains(reply, "STAT tcpport 0\r\n") {
				t.Errorf("stats settings over UDP: want tcpport 0 in %q", reply)
			}
		})
	}
}

// TestPidFileBeforePortFile: the port file is written last, after the pid
// file: memcached's t/ harness takes the port file as the sign the server
// is up, and daemonize.t then reads the pid file at once (it failed a run
// on a loaded machine when the pid file came after).
func TestPidFileBeforePortFile(t *testing.T) {
	dir := t.TempDir()
	ports, pidFile := filepath.Join(dir, "ports"), filepath.Join(dir, "pid")
	cmd := testproc.Command(binary, "-l", "127.0.0.1", "-p", "-1", "-P", pidFile)
	cmd.Env = append(os.Environ(), srv.PortFileEnv+"="+ports)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(ports); err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatal("gocached exited before writing its port file")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no port file in a minute")
		}
		time.Sleep(time.Millisecond)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(b)) != itoa(cmd.Process.Pid) {
		t.Fatalf("pid file when the port file appeared: %q, %v; want %d", b, err, cmd.Process.Pid)
	}
}
