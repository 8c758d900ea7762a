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
	"github.com/gocached/gocached/kernel/testbed"
)

// serverPort is the port the server under test listens on inside the
// server namespace (the namespace is ours alone).
const serverPort = 11211

// serverProc is a running server under test.
type serverProc struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	addr string
	// waitDone is closed once the process has been reaped.
	waitDone chan struct{}
}

// gocachedHasPollMode reports whether the gocached binary takes --poll-mode.
func gocachedHasPollMode(bin string) bool {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	return bytes.Contains(out, []byte("--poll-mode"))
}

// serverArgs is the command line of server in scenario.
// A gocached without --poll-mode runs only base, with no flag.
func serverArgs(o *Options, server, scenario string, pollMode bool) (bin string, args []string) {
	common := []string{"-l", testbed.ServerIP, "-p", strconv.Itoa(serverPort),
		"-m", strconv.Itoa(o.ServerMemMB), "-c", "4096", "-U", "0"}
	if server == Memcached {
		// memcached refuses to run as root without -u.
		return o.MemcachedBin, append(common, "-t", strconv.Itoa(o.ServerThreads), "-u", "nobody")
	}
	common = append(common, "-t", o.GocachedThreads)
	if !pollMode {
		return o.GocachedBin, common
	}
	return o.GocachedBin, append(common, "--poll-mode", scenario)
}

// startServer starts server pinned to o.ServerCPUs in the bed's server
// namespace and waits until it accepts connections from the client side.
func startServer(ctx context.Context, bed *testbed.Bed, o *Options, server, scenario string, pollMode bool) (*serverProc, error) {
	bin, args := serverArgs(o, server, scenario, pollMode)
	cmd := bed.ServerCmd(ctx, "taskset", append([]string{"-c", o.ServerCPUs, bin}, args...)...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// ip netns exec and taskset exec the server, so cmd's pid is the server's.
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", server, err)
	}
	p := &serverProc{name: server, cmd: cmd, out: out, addr: net.JoinHostPort(testbed.ServerIP, strconv.Itoa(serverPort))}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := bed.InNS(bed.ClientNS, func() error {
			c, err := net.DialTimeout("tcp", p.addr, 500*time.Millisecond)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			p.waitDone = exited
			return p, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited at start: %s", server, strings.TrimSpace(out.String()))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.waitDone = exited
			p.stop()
			return nil, fmt.Errorf("%s not accepting on %s after 10s: %v", server, p.addr, err)
		}
	}
}

func (p *serverProc) pid() int { return p.cmd.Process.Pid }

// stop kills the server by its pid and waits for it.
func (p *serverProc) stop() {
	_ = p.cmd.Process.Kill()
	select {
	case <-p.waitDone:
	case <-time.After(5 * time.Second):
	}
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
