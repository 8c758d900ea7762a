package integration

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// A memcached.conf as Debian ships it, with the port and pid file moved to
// the test's own: comments, a -d line and a logfile directive included.
const serviceConf = `# memcached default config file
# Run memcached as a daemon. This command is implied, and is not needed for the
# daemon to run. See the README.Debian that comes with this package for more
# information.
-d

# Log memcached's output to /var/log/memcached
logfile /var/log/memcached.log

# Start with a cap of 64 megs of memory.
-m 64

# Default connection port is 11211
-p PORT

# Run the daemon as root. The start-memcached will default to running as root if no
# -u command is present in this config file
-u USER

# Specify which IP address to listen on.
-l 127.0.0.1

# pid file
-P PIDFILE
`

// TestDebianServiceWrapper runs Debian's own systemd-memcached-wrapper (from
// the memcached package) on a stock-format /etc/memcached.conf, with
// gocached where the script expects /usr/bin/memcached: the swap
// contrib/README.md describes.
func TestDebianServiceWrapper(t *testing.T) {
	bin := gocachedBinary(t)
	dir := userDir(t) // the services run as root and drop to -u's user
	path := debianWrapper(t, dir, bin)
	runService(t, testproc.Command("perl", path, writeConf(t, dir, "memcache")), dir, "memcache")
}

// debianWrapper is Debian's own systemd-memcached-wrapper (from the
// memcached package), written into dir with bin where it names
// /usr/bin/memcached. It needs perl.
func debianWrapper(t *testing.T, dir, bin string) string {
	t.Helper()
	const wrapper = "/usr/share/memcached/scripts/systemd-memcached-wrapper"
	script, err := os.ReadFile(wrapper)
	if err != nil {
		missing(t, "Debian's %s not found (Debian package: memcached): %v", wrapper, err)
	}
	requireTool(t, "perl")
	patched := strings.Replace(string(script), `"/usr/bin/memcached"`, strconv.Quote(bin), 1)
	if patched == string(script) {
		t.Fatalf("%s no longer names /usr/bin/memcached; update this test", wrapper)
	}
	path := filepath.Join(dir, "debian-wrapper")
	if err := os.WriteFile(path, []byte(patched), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestContribServiceWrapper runs contrib/systemd/gocached-wrapper, the
// wrapper of gocached's own unit, on the same file.
func TestContribServiceWrapper(t *testing.T) {
	bin := gocachedBinary(t)
	dir := userDir(t)
	root, err := testproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := testproc.Command("sh", filepath.Join(root, "contrib/systemd/gocached-wrapper"), writeConf(t, dir, "nobody"))
	cmd.Env = append(os.Environ(), "GOCACHED="+bin)
	runService(t, cmd, dir, "nobody")
}

func writeConf(t *testing.T, dir, user string) string {
	t.Helper()
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.NewReplacer("PORT", strconv.Itoa(port), "USER", user, "PIDFILE", filepath.Join(dir, "memcached.pid")).Replace(serviceConf)
	path := filepath.Join(dir, "memcached.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runService starts cmd, waits for the pid file, checks the server runs as
// userName and answers on the configured port, then stops it as systemd
// does (SIGTERM) and checks a clean exit that removes the pid file.
func runService(t *testing.T, cmd *testproc.Cmd, dir, userName string) {
	t.Helper()
	u, err := user.Lookup(userName)
	if err != nil {
		missing(t, "no user %s: %v", userName, err)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "memcached.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var port string
	sc := bufio.NewScanner(strings.NewReader(string(conf)))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "-p "); ok {
			port = p
		}
	}
	var out lockedOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so that whatever the wrapper started (Debian's
	// execs through sh -c) can be killed together if the test fails.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(waited) }()
	defer func() {
		select {
		case <-waited:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
		}
	}()
	pidFile := filepath.Join(dir, "memcached.pid")
	deadline := time.Now().Add(20 * time.Second)
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		select {
		case err := <-exited:
			t.Fatalf("server exited before writing its pid file: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file after 20 s\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pgid, _ := syscall.Getpgid(pid); pgid != cmd.Process.Pid {
		t.Fatalf("pid file names %d, not a process the wrapper started", pid)
	}
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok && strings.Fields(rest)[0] != u.Uid {
			t.Errorf("server runs as uid %s, want %s (%s)", strings.Fields(rest)[0], u.Uid, userName)
		}
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 5*time.Second)
	if err != nil {
		t.Fatalf("dial the configured port %s: %v\n%s", port, err, out.String())
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("stats settings\r\n"))
	settings := map[string]string{}
	r := bufio.NewReader(c)
	for {
		l, err := r.ReadString('\n')
		if err != nil || l == "END\r\n" {
			break
		}
		if f := strings.Fields(l); len(f) == 3 {
			settings[f[1]] = f[2]
		}
	}
	c.Close()
	if settings["maxbytes"] != strconv.Itoa(64<<20) || settings["tcpport"] != port || settings["inter"] != "127.0.0.1" {
		t.Errorf("stats settings maxbytes/tcpport/inter = %s/%s/%s, want the conf's", settings["maxbytes"], settings["tcpport"], settings["inter"])
	}
	// systemd signals the PIDFile's process.
	syscall.Kill(pid, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("still running 15 s after SIGTERM")
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind (%v)", err)
	}
}

// lockedOutput collects a child's output for failure messages.
type lockedOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *lockedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *lockedOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
