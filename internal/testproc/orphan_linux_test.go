package testproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// orphanParentEnv makes the test binary act as a test binary that started
// a child and is then killed (see orphanParent).
const orphanParentEnv = "TESTPROC_ORPHAN_PARENT"

// orphanParent starts a long sleep through Command, then ends many threads
// (goroutines that exit while locked to their thread, as the testbed's
// namespace dialers do), prints the sleep's pid once it has checked the
// sleep survived that, and waits to be killed.
func orphanParent() {
	cmd := Command("sleep", "120")
	if os.Getenv(orphanParentEnv) == "dropuser" {
		// A child that changes identity, as a server under -u: the
		// kernel clears its parent-death signal (the watchdog's case).
		cmd = Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sleep", "120")
	}
	if err := cmd.Start(); err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // exits locked: Go ends this thread
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		fmt.Println("child died with a thread:", err)
		os.Exit(1)
	}
	fmt.Println("pid", cmd.Process.Pid)
	time.Sleep(2 * time.Minute) // the test kills us long before
	os.Exit(1)
}

// TestChildDiesWithTestBinary: a process started through Command survives
// its starter's threads ending, and dies when its test binary is killed.
func TestChildDiesWithTestBinary(t *testing.T) {
	orphanDies(t, "1")
}

// TestChildDroppingRootDiesWithTestBinary: a child started as root that
// drops to another user (losing its parent-death signal) dies too.
func TestChildDroppingRootDiesWithTestBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to change user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	orphanDies(t, "dropuser")
}

// orphanDies starts a test binary acting as orphanParent in mode, kills it
// once it has started its child, and waits for the child to die.
func orphanDies(t *testing.T, mode string) {
	parent := Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), orphanParentEnv+"="+mode)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "pid ") {
		t.Fatalf("parent said %q (%v)", line, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still running 30 s after its test binary was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
