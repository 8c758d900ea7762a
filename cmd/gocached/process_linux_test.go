package main

import (
	"bufio"
	"context"
	"errors"
	"github.com/gocached/gocached/internal/protocol"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gocached/gocached/internal/testproc"
)

// TestPidFileAndSIGHUP: -P holds the server's pid while it runs, SIGHUP
// leaves it running (memcached ignores it), and a graceful stop removes
// the file.
func TestPidFileAndSIGHUP(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "gocached.pid")
	s := startServer(t, "-P", pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(s.cmd.Process.Pid) {
		t.Fatalf("pid file %q, %v; want %d", b, err, s.cmd.Process.Pid)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Once the kernel has delivered SIGHUP (it is no longer pending), a
	// server that did not ignore it would be gone.
	waitSignalDelivered(t, s.cmd.Process.Pid, syscall.SIGHUP)
	versionOK(t, s.addr)
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, s.stderr)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file still there after a graceful stop (%v)", err)
	}
}

// TestDropPrivileges: as root, -u USER runs the server as USER once it
// listens; an unknown user is memcached's exit 67.
func TestDropPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		skipMissing(t, "needs root to drop privileges")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no user nobody: %v", err)
	}
	s := startServer(t, "-u", "nobody")
	versionOK(t, s.addr)
	if uid := procStatusField(t, s.cmd.Process.Pid, "Uid:"); !strings.HasPrefix(uid, nobody.Uid+"\t") {
		t.Errorf("server Uid line %q, want %s (nobody) everywhere", uid, nobody.Uid)
	}
	if !strings.Contains(s.stderr.String(), "dropped privileges") {
		t.Errorf("log does not say it dropped privileges:\n%s", s.stderr)
	}
	_, stderr, code := runBinary(t, "-p", "-1", "-l", "127.0.0.1", "-u", "no-such-user-here")
	if code != 67 || !strings.Contains(stderr, "can't find the user no-such-user-here to switch to") {
		t.Errorf("unknown -u user: exit %d, stderr %q; want 67 and memcached's message", code, stderr)
	}
}

// TestDaemonize: -d returns once the server listens, leaving it running in
// its own session with the pid in -P's file.
func TestDaemonize(t *testing.T) {
	port, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "d.pid")
	killDaemonAtCleanup(t, pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := testproc.CommandContext(ctx, binary, "-d", "-p", strconv.Itoa(port), "-l", "127.0.0.1", "-P", pidFile).CombinedOutput()
	if err != nil {
		t.Fatalf("gocached -d: %v: %s", err, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("no pid file after -d returned: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proc, err := os.FindProcess(pid)
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %q", b)
	}
	if sid, _ := unix.Getsid(pid); sid != pid {
		t.Errorf("daemon session %d, want its own (%d)", sid, pid)
	}
	versionOK(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file still there after the daemon stopped (%v)", err)
	}
}

// waitSignalDelivered waits until sig is pending neither for the process
// pid nor for any of its threads (/proc/PID/task/*/status).
func waitSignalDelivered(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (sig - 1)
	pending := func() bool {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // the thread exited
			}
			for _, l := range strings.Split(string(b), "\n") {
				name, v, _ := strings.Cut(l, ":")
				if name != "SigPnd" && name != "ShdPnd" {
					continue
				}
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&bit != 0 {
					return true
				}
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); pending(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v still pending for %d after 30 s", sig, pid)
		}
	}
}

func versionOK(t *testing.T, addr string) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("version\r\n"))
	if l, err := bufio.NewReader(nc).ReadString('\n'); err != nil || !strings.HasPrefix(l, "VERSION ") {
		t.Fatalf("version: %q, %v", l, err)
	}
}

func procStatusField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestSASLSetup: -S reads memcached's MEMCACHED_SASL_PWDB file when that is
// set, else Cyrus SASL's configuration (SASL_CONF_PATH, /etc/sasl,
// /etc/sasl2). With neither, the server cannot check anyone: like
// memcached it prints "Error initializing sasl." first and exits 1, then
// says what it looked for; so does a Cyrus setup gocached cannot serve.
func TestSASLSetup(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SASL_CONF_PATH=") && !strings.HasPrefix(kv, protocol.SASLPasswordEnv+"=") {
			env = append(env, kv)
		}
	}
	refuse := func(name string, extra ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := testproc.CommandContext(ctx, binary, "-p", "-1", "-l", "127.0.0.1", "-S")
		cmd.Env = append(append([]string(nil), env...), extra...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasPrefix(string(out), saslInitFailedLine+"\n") {
			t.Errorf("%s: %v, %s; want exit 1, %q first", name, err, out, saslInitFailedLine)
		}
	}
	start := func(name string, extra ...string) {
		t.Helper()
		cmd := testproc.Command(binary, "-p", "-1", "-l", "127.0.0.1", "-v", "-S")
		cmd.Env = append(append([]string(nil), env...), extra...)
		s := startProcess(t, cmd)
		s.cmd.Process.Signal(syscall.SIGTERM)
		if code := s.wait(t); code != 0 {
			t.Errorf("%s: exit %d; stderr:\n%s", name, code, s.stderr)
		}
	}
	systemConf := false
	for _, p := range []string{"/etc/sasl/memcached.conf", "/etc/sasl2/memcached.conf"} {
		if _, err := os.Stat(p); err == nil {
			systemConf = true
		}
	}
	if !systemConf {
		refuse("no configuration at all")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pwdb")
	if err := os.WriteFile(pw, []byte("alice:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start("MEMCACHED_SASL_PWDB", protocol.SASLPasswordEnv+"="+pw)
	conf := func(body string) string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "memcached.conf"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return "SASL_CONF_PATH=" + d
	}
	start("Cyrus, mech_list", conf("mech_list: plain cram-md5\nsasldb_path: "+filepath.Join(dir, "sasldb2")+"\n"))
	start("Cyrus, a path without memcached.conf (libsasl2's defaults)", "SASL_CONF_PATH="+filepath.Join(dir, "none"))
	refuse("Cyrus, saslauthd", conf("pwcheck_method: saslauthd\n"))
	refuse("Cyrus, no mechanism gocached has", conf("mech_list: digest-md5 ntlm\n"))
}

// TestUnixSocket: -s serves on an AF_UNIX path with -a's mode, and
// `stats settings` reports both as memcached does: -a as given, the socket
// its permission bits (memcached's umask(~(mask & 0777))), so 0 is mode
// 000 and 1777 mode 777.
func TestUnixSocket(t *testing.T) {
	for _, engine := range []string{"go", "epoll", "uring"} {
		for _, c := range []struct {
			mask string
			mode os.FileMode
		}{{"766", 0o766}, {"0", 0}, {"1777", 0o777}} {
			t.Run(engine+"/-a "+c.mask, func(t *testing.T) {
				if c.mode&0o600 != 0o600 && os.Geteuid() != 0 {
					skipMissing(t, "only root may connect to a socket of mode %#o", c.mode)
				}
				path := filepath.Join(t.TempDir(), "mc.sock")
				s := startServer(t, "--engine="+engine, "-s", path, "-a", c.mask)
				if s.addr != path {
					t.Errorf("serving on %q, want %q", s.addr, path)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != c.mode {
					t.Fatalf("socket %v, %v; want mode %#o", fi, err, c.mode)
				}
				nc, err := net.DialTimeout("unix", path, 5*time.Second) // as root
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				got := readStats(t, nc, "settings")
				if got["domain_socket"] != path || got["umask"] != c.mask {
					t.Errorf("stats settings domain_socket=%q umask=%q, want %q and %s", got["domain_socket"], got["umask"], path, c.mask)
				}
			})
		}
	}
}

// TestIdleTimeout: -o idle_timeout closes a client that sends nothing, and
// `stats` shows idle_kicks (which memcached prints only with the option)
// and `stats settings` the timeout.
func TestIdleTimeout(t *testing.T) {
	for _, engine := range []string{"go", "epoll"} {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, "--engine="+engine, "-o", "idle_timeout=1")
			idle, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close()
			idle.SetReadDeadline(time.Now().Add(15 * time.Second))
			if n, err := idle.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Fatalf("idle client read %d bytes, %v; want the server to close it (EOF)", n, err)
			}
			nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			if got := readStats(t, nc, "")["idle_kicks"]; got != "1" {
				t.Errorf("idle_kicks = %q, want 1", got)
			}
			if got := readStats(t, nc, "settings")["idle_timeout"]; got != "1" {
				t.Errorf("stats settings idle_timeout = %q, want 1", got)
			}
		})
	}
}

// saslInitFailedLine is memcached's line when -S finds no usable setup.
const saslInitFailedLine = "Error initializing sasl."
