package testproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds on waiting for a server. Generous: the machine may be shared and
// the server may run under the race detector.
const (
	DefaultReadyTimeout = 10 * time.Second // from start until it accepts
	DefaultStopTimeout  = 10 * time.Second // from SIGTERM until it exits
	// A killed process still runs its exit in the kernel, on its own CPU
	// time: a server started at a low priority on a saturated machine
	// (memcached's threads, its 64 MB unmapped) was seen to need over 5 s.
	killWait      = 30 * time.Second // from SIGKILL until reaped
	dialTimeout   = 500 * time.Millisecond
	probeInterval = 20 * time.Millisecond
	portAttempts  = 4
	outputLimit   = 1 << 20
)

// Spec says how to start one server.
type Spec struct {
	Name string   // in errors and logs: "epoll", "memcached"
	Path string   // the binary
	Args []string // its arguments
	// Wrap is a command prefix that execs the server, such as
	// {"taskset", "-c", "1"}: it must exec (not fork) so that the process we
	// start, signal and measure is the server itself.
	Wrap []string
	// NetNS, when set, runs the server in that network namespace through
	// `ip netns exec`, which also execs. Readiness is then probed with Dial,
	// which must reach the namespace (e.g. from a peer namespace).
	NetNS string
	// Addr is the host:port the server listens on, probed for readiness.
	Addr string
	// Dial connects to addr for the readiness probe; nil dials TCP from
	// this process's namespace.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// ReadyTimeout bounds the wait for the first accepted connection;
	// 0 means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Env holds extra NAME=value variables on top of this process's
	// environment (e.g. memcached's MEMCACHED_SASL_PWDB).
	Env []string
}

// command is the full command line of s: netns, wrapper, server.
func (s Spec) command() []string {
	var argv []string
	if s.NetNS != "" {
		argv = append(argv, "ip", "netns", "exec", s.NetNS)
	}
	argv = append(argv, s.Wrap...)
	argv = append(argv, s.Path)
	return append(argv, s.Args...)
}

// Proc is a started server. Its methods are safe for concurrent use.
type Proc struct {
	spec Spec
	cmd  *Cmd
	out  *output
	done chan struct{} // closed once the process has been reaped
	wait error         // Wait's result, valid after done
}

// Start runs spec and waits until the server accepts a connection on
// spec.Addr, at most spec.ReadyTimeout or until ctx ends. On any failure the
// process is killed and the error carries the server's output. ctx bounds
// only the start: the running server lives until Stop or Kill.
func Start(ctx context.Context, spec Spec) (*Proc, error) {
	if spec.Path == "" || spec.Addr == "" {
		return nil, fmt.Errorf("start %s: Spec needs Path and Addr", spec.Name)
	}
	argv := spec.command()
	p := &Proc{spec: spec, out: &output{}, done: make(chan struct{})}
	p.cmd = Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if len(spec.Env) > 0 {
		p.cmd.Env = append(os.Environ(), spec.Env...)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", p, err)
	}
	go func() {
		p.wait = p.cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx); err != nil {
		_ = p.Kill()
		return nil, fmt.Errorf("start %s: %w; output:\n%s", p, err, p.Output())
	}
	return p, nil
}

// StartOnFreePort starts spec on a free loopback port: it appends "-p PORT"
// to the arguments (gocached and memcached share the flag) and probes
// 127.0.0.1:PORT, which a wildcard listener also serves. Another process can
// take the port between our probe and the server's bind (waitReady then does
// not take its answer for ours), so a failed start is retried a few times on
// a fresh port.
func StartOnFreePort(ctx context.Context, spec Spec) (*Proc, error) {
	var errs []error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := spec
		s.Args = append(append([]string(nil), spec.Args...), "-p", strconv.Itoa(port))
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err := Start(ctx, s)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// freePort is FreePort; a test makes it hand out a taken port.
var freePort = FreePort

// FreePort asks the kernel for a loopback TCP port nobody holds right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *Proc) waitReady(ctx context.Context) error {
	limit := p.spec.ReadyTimeout
	if limit <= 0 {
		limit = DefaultReadyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	dial := p.spec.Dial
	if dial == nil {
		dial = func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	for {
		c, err := dial(ctx, p.spec.Addr)
		if err == nil {
			c.Close()
			if ownsListener(p.Pid(), p.spec.Addr) {
				return nil
			}
			// Another process answers on our port: ours either binds
			// it once that one lets go, or fails to and exits (then
			// StartOnFreePort tries a fresh port).
			err = fmt.Errorf("%s answers, but pid %d does not listen there", p.spec.Addr, p.Pid())
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before accepting: %v", p.exitErr())
		case <-ctx.Done():
			return fmt.Errorf("not accepting on %s after %v: %w (last dial: %v)", p.spec.Addr, limit, ctx.Err(), err)
		case <-time.After(probeInterval):
		}
	}
}

// Pid is the server's process id (wrappers exec, so it is the server's).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Addr is the host:port the server was probed on.
func (p *Proc) Addr() string { return p.spec.Addr }

// Port is the port of Addr.
func (p *Proc) Port() int {
	_, port, _ := net.SplitHostPort(p.spec.Addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Name is the Spec's name.
func (p *Proc) Name() string { return p.spec.Name }

// Output is what the server has written to stdout and stderr so far (the
// first MiB: -vv can be chatty).
func (p *Proc) Output() string { return p.out.String() }

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// String names the process for logs: name, pid once started, command line.
func (p *Proc) String() string {
	pid := ""
	if p.cmd != nil && p.cmd.Process != nil {
		pid = fmt.Sprintf("pid %d, ", p.cmd.Process.Pid)
	}
	return fmt.Sprintf("%s (%s%s)", p.spec.Name, pid, strings.Join(p.spec.command(), " "))
}

// Memory reads the server's peak and current resident set size.
func (p *Proc) Memory() (Memory, error) { return ReadMemory(p.Pid()) }

// Stop sends SIGTERM and waits up to timeout (0: DefaultStopTimeout) for the
// exit, then kills. It returns nil only for exit status 0: a server that
// dies of the signal itself, exits nonzero or needs SIGKILL did not shut
// down cleanly. Calling it after the exit returns the same result.
func (p *Proc) Stop(timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultStopTimeout
	}
	select {
	case <-p.done:
		return p.exitErr()
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: SIGTERM: %w", p, err)
	}
	select {
	case <-p.done:
		return p.exitErr()
	case <-time.After(timeout):
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return fmt.Errorf("stop %s: still running %v after SIGTERM; killed", p, timeout)
}

// Kill sends SIGKILL (unless the process has exited) and waits, bounded,
// until it is reaped.
func (p *Proc) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Kill() // fails only if it has just exited, which done shows
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("kill %s: not reaped %v after SIGKILL", p, killWait)
	}
}

// exitErr is nil for exit status 0, after done.
func (p *Proc) exitErr() error {
	if p.wait != nil {
		return fmt.Errorf("%s: %w", p.spec.Name, p.wait)
	}
	return nil
}

// output collects a process's output safely across goroutines, bounded.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if room := outputLimit - o.buf.Len(); room > 0 {
		o.buf.Write(b[:min(len(b), room)])
	}
	return len(b), nil // never fail the child's writes
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
