//go:build linux

package testbed

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// busyPollSetup says how the server socket and the server's veth NAPIs are
// configured for one run of pingPongRaw.
type busyPollSetup struct {
	busyPollUsecs int // SO_BUSY_POLL on the accepted socket; 0 = unset
	prefer        bool
	deferIRQs     int // sysfs napi_defer_hard_irqs of ServerDev
	groFlushNs    int // sysfs gro_flush_timeout of ServerDev
}

func (b *Bed) setServerSysfs(t *testing.T, name string, v int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	path := "/sys/class/net/" + b.ServerDev + "/" + name
	if out, err := b.ServerCmd(ctx, "sh", "-c", "echo "+strconv.Itoa(v)+" > "+path).CombinedOutput(); err != nil {
		t.Fatalf("setting %s: %v %s", path, err, out)
	}
}

// pingPongRaw runs rounds request/response exchanges over one connection whose
// server side is a blocking raw socket (so recv busy-polls when asked) and
// returns how much the server namespace's BusyPollRxPackets grew.
func pingPongRaw(t *testing.T, b *Bed, rounds int, s busyPollSetup) uint64 {
	t.Helper()
	b.setServerSysfs(t, "napi_defer_hard_irqs", s.deferIRQs)
	b.setServerSysfs(t, "gro_flush_timeout", s.groFlushNs)
	t.Cleanup(func() {
		b.setServerSysfs(t, "napi_defer_hard_irqs", 0)
		b.setServerSysfs(t, "gro_flush_timeout", 0)
	})

	var lfd int
	if err := InNS(b.ServerNS, func() error {
		var err error
		if lfd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		sa := &unix.SockaddrInet4{Addr: [4]byte(net.ParseIP(b.ServerIP).To4())}
		if err := unix.Bind(lfd, sa); err != nil {
			return err
		}
		return unix.Listen(lfd, 8)
	}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(b.ServerIP, strconv.Itoa(sa.(*unix.SockaddrInet4).Port))

	before, err := BusyPollRxPackets(b.ServerNS)
	if err != nil {
		t.Fatal(err)
	}
	clientErr := make(chan error, 1)
	go func() {
		clientErr <- InNS(b.ClientNS, func() error {
			c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			buf := make([]byte, 8)
			for i := 0; i < rounds; i++ {
				if _, err := c.Write([]byte("request!")); err != nil {
					return err
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	// Accept with a bounded wait, so a dead client cannot hang the test.
	tv := unix.Timeval{Sec: 20}
	unix.SetsockoptTimeval(lfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var cfd int
	err = retryEINTR(func() (e error) { cfd, _, e = unix.Accept4(lfd, unix.SOCK_CLOEXEC); return })
	if err != nil {
		t.Fatalf("accept: %v (client: %v)", err, <-clientErr)
	}
	defer unix.Close(cfd)
	unix.SetsockoptTimeval(cfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if s.busyPollUsecs > 0 {
		if err := unix.SetsockoptInt(cfd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, s.busyPollUsecs); err != nil {
			t.Fatal(err)
		}
		if err := unix.SetsockoptInt(cfd, unix.SOL_SOCKET, unix.SO_BUSY_POLL_BUDGET, 64); err != nil {
			t.Fatal(err)
		}
	}
	if s.prefer {
		if err := unix.SetsockoptInt(cfd, unix.SOL_SOCKET, unix.SO_PREFER_BUSY_POLL, 1); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 8)
	for i := 0; i < rounds; i++ {
		for got := 0; got < len(buf); {
			var n int
			err := retryEINTR(func() (e error) { n, e = unix.Read(cfd, buf[got:]); return })
			if err != nil || n == 0 {
				t.Fatalf("round %d: read %d, %v (client: %v)", i, n, err, <-clientErr)
			}
			got += n
		}
		if err := retryEINTR(func() (e error) { _, e = unix.Write(cfd, []byte("response")); return }); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-clientErr; err != nil {
		t.Fatal(err)
	}
	after, err := BusyPollRxPackets(b.ServerNS)
	if err != nil {
		t.Fatal(err)
	}
	return after - before
}

// retryEINTR repeats a blocking socket call the Go runtime's preemption
// signals interrupted: with SO_RCVTIMEO set the kernel does not restart it
// even though Go installs its handlers with SA_RESTART.
func retryEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

func globalBusyPollSysctlsZero(t *testing.T) bool {
	for _, f := range []string{"/proc/sys/net/core/busy_read", "/proc/sys/net/core/busy_poll"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(b)) != "0" {
			return false
		}
	}
	return true
}

// The bed supports busy polling end to end: with SO_BUSY_POLL and
// SO_PREFER_BUSY_POLL on the server socket and IRQ deferral on the server's
// NAPIs, packets reach the socket through busy polling and the namespace's
// TcpExt:BusyPollRxPackets counts them; without busy polling it stays flat.
func TestBusyPollRxPacketsInBed(t *testing.T) {
	b := Up(t)
	const rounds = 2000
	tests := []struct {
		name  string
		setup busyPollSetup
		grows bool
	}{
		{"no busy polling", busyPollSetup{}, false},
		{"preferred busy polling with deferral", busyPollSetup{busyPollUsecs: 200, prefer: true, deferIRQs: 100, groFlushNs: 200000}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rx0, err := NetRxSoftirqs()
			if err != nil {
				t.Fatal(err)
			}
			delta := pingPongRaw(t, b, rounds, tt.setup)
			rx1, err := NetRxSoftirqs()
			if err != nil {
				t.Fatal(err)
			}
			var softirqs uint64
			for i := range rx1 {
				softirqs += rx1[i] - rx0[i]
			}
			t.Logf("%d round trips: BusyPollRxPackets +%d, NET_RX softirqs (all CPUs) +%d", rounds, delta, softirqs)
			switch {
			case tt.grows && delta == 0:
				t.Errorf("BusyPollRxPackets did not grow with busy polling on")
			case !tt.grows && delta != 0 && globalBusyPollSysctlsZero(t):
				t.Errorf("BusyPollRxPackets grew by %d with busy polling off", delta)
			}
		})
	}
}
