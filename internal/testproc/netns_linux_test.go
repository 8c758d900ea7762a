package testproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNetNS runs fn on a locked OS thread switched into the named namespace.
// If switching back fails the thread stays locked and dies with the goroutine.
func inNetNS(ns string, fn func() error) error {
	target, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns back: %w", err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// TestNetNS starts gocached inside a fresh network namespace of its own and
// probes it from inside that namespace: this process's loopback must not
// reach it, proving the server really runs in the namespace.
func TestNetNS(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		msg := fmt.Sprintf("network namespaces need root and ip (iproute2); euid %d, ip: %v", os.Geteuid(), err)
		if Required() {
			t.Fatalf("%s (%s=1)", msg, RequireEnv)
		}
		t.Skipf("skipping: %s; set %s=1 to fail instead", msg, RequireEnv)
	}
	ns := "gocached-tp-" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
	})
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up in %s: %v: %s", ns, err, out)
	}
	port, err := FreePort() // free here; the namespace is empty anyway
	if err != nil {
		t.Fatal(err)
	}
	spec := Gocached(gocached(t), "epoll", "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0")
	spec.NetNS = ns
	spec.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	spec.Dial = func(ctx context.Context, addr string) (c net.Conn, err error) {
		err = inNetNS(ns, func() error {
			c, err = net.DialTimeout("tcp", addr, 500*time.Millisecond)
			return err
		})
		return c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if c, err := net.DialTimeout("tcp", p.Addr(), 500*time.Millisecond); err == nil {
		c.Close()
		t.Fatalf("reached %s from outside namespace %s", p.Addr(), ns)
	}
	if _, err := p.Memory(); err != nil {
		t.Fatalf("memory of the server (not of ip): %v", err)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.Pid())); err != nil || exe != spec.Path {
		t.Fatalf("pid %d runs %q (%v), want the server %s: ip netns exec must exec", p.Pid(), exe, err, spec.Path)
	}
	if err := p.Stop(0); err != nil {
		t.Fatalf("stop: %v; output:\n%s", err, p.Output())
	}
}
