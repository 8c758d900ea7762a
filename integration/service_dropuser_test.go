package integration

import (
	"context"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// memcached drops root (-u) before it creates anything, so what it creates
// belongs to the -u user and is opened with that user's rights. gocached
// keeps root until its listeners are bound, and must leave the same files
// behind. These tests run every engine and memcached as root with
// -u nobody.

// userDir is a directory anyone may create files in, with parents nobody
// can search (t.TempDir's parent is root's alone).
func userDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "needs root to run servers with -u nobody")
	}
	dir, err := os.MkdirTemp("", "gocached-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// userSpec is tg's spec with -u nobody (memcached's spec adds it as root).
func userSpec(t *testing.T, tg target, flags ...string) testproc.Spec {
	if !tg.isReference() {
		flags = append(flags, "-u", "nobody")
	}
	return spec(t, tg, flags...)
}

func nobodyIDs(t *testing.T) (uid, gid uint32) {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := strconv.Atoi(u.Uid)
	b, _ := strconv.Atoi(u.Gid)
	return uint32(a), uint32(b)
}

// checkOwned fails unless path belongs to nobody and, when perm is not 0,
// has that permission bits.
func checkOwned(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	uid, gid := nobodyIDs(t)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid || (perm != 0 && fi.Mode().Perm() != perm) {
		t.Errorf("%s: owner %d:%d mode %v, want nobody (%d:%d) and %v", path, st.Uid, st.Gid, fi.Mode().Perm(), uid, gid, perm)
	}
}

// TestUnixSocketBelongsToUser: the -s socket is the user's, with -a's
// default mode 0700, so the service user's clients can connect.
func TestUnixSocketBelongsToUser(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		dir := userDir(t)
		path := filepath.Join(dir, "mc.sock")
		sp := userSpec(t, tg, "-s", path)
		sp.Addr = path
		sp.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := testproc.Start(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop(0)
		checkOwned(t, path, 0o700)
	})
}

// TestMemoryFileBelongsToUser: -e's file is created as the user, mode 0700,
// the port file (MEMCACHED_PORT_FILENAME) is the user's, and a graceful
// stop (SIGUSR1), running as the user, saves the metadata beside them.
func TestMemoryFileBelongsToUser(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		dir := userDir(t)
		mem, ports := filepath.Join(dir, "mem"), filepath.Join(dir, "ports")
		sp := userSpec(t, tg, "-l", "127.0.0.1", "-U", "0", "-m", "64", "-e", mem)
		sp.Env = append(sp.Env, "MEMCACHED_PORT_FILENAME="+ports)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, err := testproc.StartOnFreePort(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Kill()
		checkOwned(t, mem, 0o700)
		// The server may accept before it has written the port file (a
		// busy machine shows it): wait for the file, bounded.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Lstat(ports); err == nil || time.Now().After(deadline) {
				break
			}
		}
		checkOwned(t, ports, 0)
		if err := syscall.Kill(p.Pid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("no exit 20 s after SIGUSR1")
		}
		checkOwned(t, mem+".meta", 0)
	})
}

// TestMemoryFileNotWritableByUser: a memory file the user may not create
// fails the start with memcached's line first (memcached then aborts,
// gocached exits 1).
func TestMemoryFileNotWritableByUser(t *testing.T) {
	userDir(t)         // root, or skip
	dir := t.TempDir() // root's, 0700
	mc := referenceMemcached(t)
	args := []string{"-p", "0", "-U", "0", "-l", "127.0.0.1", "-m", "8", "-e", filepath.Join(dir, "mem"), "-u", "nobody"}
	mStatus, mErr := runCLI(t, mc, args)
	want := "failed to open file for mmap: Permission denied"
	if mStatus == 0 || !strings.HasPrefix(mErr, want) {
		t.Fatalf("memcached: status %d, stderr %q; want its abort with %q", mStatus, mErr, want)
	}
	for _, tg := range engineTargets {
		status, stderr := runCLI(t, gocachedBinary(t), append([]string{"--engine=" + tg.engine}, args...))
		if first, _, _ := strings.Cut(stderr, "\n"); status != 1 || first != want {
			t.Errorf("%s: status %d, stderr %q; want 1 and %q first", tg.name, status, stderr, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "mem")); !os.IsNotExist(err) {
			t.Errorf("%s: the memory file was created (%v)", tg.name, err)
		}
	}
}

// TestDroppedGroupsEveryThread: started as root with supplementary groups,
// the server keeps none of them in any thread after -u (memcached calls
// setgroups(0, NULL) before its threads start; a drop done in one thread of
// a Go process must reach all of them).
func TestDroppedGroupsEveryThread(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		userDir(t) // root, or skip
		setpriv := requireTool(t, "setpriv")
		sp := userSpec(t, tg, "-l", "127.0.0.1", "-U", "0")
		sp.Wrap = []string{setpriv, "--groups=4,27", "--"}
		p := startSpec(t, sp, false)
		uid, _ := nobodyIDs(t)
		// The listeners accept before the drop, and the drop reaches the
		// threads one after another: wait until every thread is nobody.
		tasks := func() []string {
			fs, err := filepath.Glob("/proc/" + strconv.Itoa(p.Pid()) + "/task/*/status")
			if err != nil || len(fs) == 0 {
				t.Fatalf("no threads listed: %v", err)
			}
			return fs
		}
		nobody := "Uid:\t" + strconv.Itoa(int(uid)) + "\t"
		for deadline := time.Now().Add(10 * time.Second); ; {
			var root string
			for _, f := range tasks() {
				if st := readFile(f); st != "" && !strings.Contains(st, nobody) {
					root = f
				}
			}
			if root == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still not nobody 10 s after the start:\n%s", root, readFile(root))
			}
			time.Sleep(10 * time.Millisecond)
		}
		for _, f := range tasks() {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // the thread ended
			}
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "Groups:"); ok && strings.TrimSpace(rest) != "" {
					t.Errorf("%s: Groups %q, want none", f, strings.TrimSpace(rest))
				}
				if rest, ok := strings.CutPrefix(line, "Uid:"); ok && strings.Fields(rest)[0] != strconv.Itoa(int(uid)) {
					t.Errorf("%s: Uid %q, want nobody's", f, strings.TrimSpace(rest))
				}
			}
		}
	})
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
