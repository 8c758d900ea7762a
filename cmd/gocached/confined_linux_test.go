package main

import (
	"bufio"
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

	"github.com/gocached/gocached/internal/testproc"
)

// TestConfinedLikeDebianUnit: Debian's memcached.service runs the server as
// root with only CAP_SETGID, CAP_SETUID and CAP_SYS_RESOURCE in its bounding
// set, and memcached, which becomes the -u user before it creates anything,
// makes its -s socket and -e memory file in the user's /run/memcached
// (0755) without CAP_DAC_OVERRIDE or CAP_CHOWN. gocached, started the same
// way (contrib/README.md's diversion, or contrib's unit), must do as well:
// make them as the user, not as root and then chown them.
func TestConfinedLikeDebianUnit(t *testing.T) {
	if os.Geteuid() != 0 {
		skipMissing(t, "needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		skipMissing(t, "needs setpriv (util-linux)")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		skipMissing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	base, err := os.MkdirTemp("", "gocached-confined-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	run := filepath.Join(base, "run") // like /run/memcached: the user's, 0755
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(run, uid, gid); err != nil {
		t.Fatal(err)
	}
	sock, mem, pid := filepath.Join(run, "mc.sock"), filepath.Join(run, "mem"), filepath.Join(run, "mc.pid")
	for _, engine := range []string{"epoll", "go"} {
		t.Run(engine, func(t *testing.T) {
			cmd := testproc.Command(setpriv, "--bounding-set=-all,+setgid,+setuid,+sys_resource", "--",
				binary, "-v", "--engine="+engine, "-u", "nobody", "-s", sock, "-a", "0770", "-m", "8", "-e", mem, "-P", pid)
			s := startProcess(t, cmd)
			for path, want := range map[string]os.FileMode{sock: 0o770, mem: 0o700, pid: 0o644} {
				fi, err := os.Lstat(path)
				if err != nil {
					t.Errorf("%s: %v", path, err)
					continue
				}
				st := fi.Sys().(*syscall.Stat_t)
				if int(st.Uid) != uid || int(st.Gid) != gid || fi.Mode().Perm() != want {
					t.Errorf("%s: owner %d:%d mode %v, want nobody's (%d:%d) and %v", path, st.Uid, st.Gid, fi.Mode().Perm(), uid, gid, want)
				}
			}
			nc, err := net.DialTimeout("unix", sock, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			nc.Write([]byte("version\r\n"))
			if l, err := bufio.NewReader(nc).ReadString('\n'); err != nil || !strings.HasPrefix(l, "VERSION ") {
				t.Errorf("version over -s: %q, %v", l, err)
			}
			nc.Close()
			s.cmd.Process.Signal(syscall.SIGUSR1) // graceful: the cache is saved beside -e's file, as the user
			if code := s.wait(t); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, s.stderr)
			}
			if _, err := os.Stat(mem + ".meta"); err != nil {
				t.Errorf("no metadata after a graceful stop: %v; stderr:\n%s", err, s.stderr)
			}
			os.Remove(sock)
			os.Remove(mem + ".meta")
		})
	}
}

// TestSlabClassLinesAtVV: -vv prints memcached's slabs_init lines, one per
// size class, before the server listens.
func TestSlabClassLinesAtVV(t *testing.T) {
	s := startServer(t, "-vv", "-f", "1.5", "-n", "100")
	text := s.stderr.String()
	for _, want := range []string{
		"slab class   1: chunk size       152 perslab    6898",
		"slab class   2: chunk size       232 perslab    4519",
		"slab class  21: chunk size    524288 perslab       2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("-vv output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "slab class  22:") {
		t.Errorf("-vv prints a 22nd class for -f 1.5 -n 100 (memcached has 21):\n%s", text)
	}
	if i, j := strings.Index(text, "slab class   1:"), strings.Index(text, "server listening"); i < 0 || j < 0 || i > j {
		t.Errorf("slab class lines not before the listening line:\n%s", text)
	}
}
