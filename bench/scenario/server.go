//go:build linux

package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// serverPort is the port the server under test listens on inside the
// server namespace (the namespace is ours alone).
const serverPort = 11211

// gocachedHasPollMode reports whether the gocached binary takes --poll-mode.
func gocachedHasPollMode(bin string) bool {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	return bytes.Contains(out, []byte("--poll-mode"))
}

// serverSpec is the command line of server in scenario, pinned to
// o.ServerCPUs with taskset and run in the bed's server namespace (both
// exec, so the process we measure is the server). A gocached without
// --poll-mode runs only base, with no flag.
func serverSpec(bed *testbed.Bed, o *Options, server, scenario string, pollMode bool) testproc.Spec {
	common := []string{"-l", testbed.ServerIP, "-p", strconv.Itoa(serverPort),
		"-m", strconv.Itoa(o.ServerMemMB), "-c", "4096", "-U", "0"}
	var sp testproc.Spec
	switch {
	case server == Memcached:
		sp = testproc.Memcached(o.MemcachedBin, append(common, "-t", strconv.Itoa(o.ServerThreads))...)
	case pollMode:
		sp = testproc.Gocached(o.GocachedBin, "", append(common, "-t", o.GocachedThreads, "--poll-mode", scenario)...)
	default:
		sp = testproc.Gocached(o.GocachedBin, "", append(common, "-t", o.GocachedThreads)...)
	}
	sp.Name = server
	sp.Wrap = []string{"taskset", "-c", o.ServerCPUs}
	sp.NetNS = bed.ServerNS
	sp.Addr = net.JoinHostPort(testbed.ServerIP, strconv.Itoa(serverPort))
	// The server address is reachable only from the client namespace.
	sp.Dial = func(ctx context.Context, addr string) (c net.Conn, err error) {
		err = bed.InNS(bed.ClientNS, func() error {
			d := net.Dialer{Timeout: 500 * time.Millisecond}
			c, err = d.DialContext(ctx, "tcp", addr)
			return err
		})
		return c, err
	}
	return sp
}

// startServer starts server in scenario and waits until it accepts
// connections from the client side.
func startServer(ctx context.Context, bed *testbed.Bed, o *Options, server, scenario string, pollMode bool) (*testproc.Proc, error) {
	return testproc.Start(ctx, serverSpec(bed, o, server, scenario, pollMode))
}

// setDeviceKnobs writes the device-wide NAPI knobs of scenario through the
// server namespace's sysfs; they apply to every NAPI of the device. gocached
// sets its own per-NAPI knobs; this serves memcached's deferX and resets
// leftovers (base writes zeros) before every server start.
func setDeviceKnobs(ctx context.Context, bed *testbed.Bed, scenario string) error {
	m, err := napi.ParseMode(scenario)
	if err != nil {
		return err
	}
	dev := "/sys/class/net/" + bed.ServerDev
	script := fmt.Sprintf("echo %d > %s/napi_defer_hard_irqs && echo %d > %s/gro_flush_timeout",
		m.DeferHardIRQs, dev, m.GROFlushTimeoutNs, dev)
	out, err := bed.ServerCmd(ctx, "sh", "-c", script).CombinedOutput()
	if err != nil {
		return fmt.Errorf("setting %s knobs on %s: %w: %s", scenario, bed.ServerDev, err, strings.TrimSpace(string(out)))
	}
	return nil
}

var errSkipped = errors.New("skipped")
