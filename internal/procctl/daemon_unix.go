//go:build unix

package procctl

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// daemonReadyEnv tells a daemonized child which descriptor to report
// readiness on; its presence also means "already in the background".
const daemonReadyEnv = "GOCACHED_DAEMON_READY_FD"

// daemonStartLimit bounds how long the parent of -d waits for the child.
const daemonStartLimit = 60 * time.Second

// Daemonize runs this program again in the background, in a session of its
// own with standard input and output on /dev/null (standard error too once
// it listens, unless -v, as memcached keeps it when verbose), and returns
// the parent's exit status once the child listens: 0, or, with the child's
// own output (its reason) when it failed to start, the child's status (67
// for an unknown -u user, as memcached, which looks the user up before it
// forks, exits; 71 for a listener; 1 if it died otherwise).
func Daemonize(args []string, verbose bool, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
		return 1
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
		return 1
	}
	defer r.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
		return 1
	}
	defer devnull.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), daemonReadyEnv+"=3")
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, os.Stderr
	var startErr *daemonStderr
	if !verbose {
		// Until it listens the child writes to us, so that a failed
		// start shows its reason; then it points standard error at
		// /dev/null itself (NotifyDaemonParent).
		if startErr, err = newDaemonStderr(); err != nil {
			w.Close()
			fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
			return 1
		}
		defer startErr.close()
		cmd.Stderr = startErr.w
		cmd.Env = append(cmd.Env, daemonQuietEnv+"=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
		return 1
	}
	w.Close()
	if startErr != nil {
		startErr.started()
	}
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, 64))
		got <- string(b)
	}()
	select {
	case msg := <-got:
		if msg == "ready\n" {
			return 0
		}
		state, _ := cmd.Process.Wait()
		if startErr != nil {
			stderr.Write(startErr.output())
		}
		fmt.Fprintf(stderr, "gocached: -d: the server did not start (%v)\n", state)
		if state != nil && state.ExitCode() > 0 {
			return state.ExitCode()
		}
		return 1
	case <-time.After(daemonStartLimit):
		fmt.Fprintf(stderr, "gocached: -d: the server did not listen within %v (pid %d left running)\n", daemonStartLimit, cmd.Process.Pid)
		return 1
	}
}

// InDaemonChild reports whether this process is the background child of -d.
func InDaemonChild() bool { return os.Getenv(daemonReadyEnv) != "" }

// NotifyDaemonParent tells the waiting parent of -d that the server
// listens, then closes the pipe; outside -d it does nothing.
func NotifyDaemonParent() {
	fd, err := strconv.Atoi(os.Getenv(daemonReadyEnv))
	if err != nil || fd < 3 {
		return
	}
	if os.Getenv(daemonQuietEnv) != "" {
		// The parent is about to exit: from now on, as memcached's
		// daemon(3) without -v, standard error is /dev/null.
		if devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			syscall.Dup2(int(devnull.Fd()), 2)
			devnull.Close()
		}
		os.Unsetenv(daemonQuietEnv)
	}
	f := os.NewFile(uintptr(fd), "daemon-ready")
	f.WriteString("ready\n")
	f.Close()
	os.Unsetenv(daemonReadyEnv)
}

// daemonQuietEnv tells the child of -d without -v that its standard error
// goes to the waiting parent only until it listens.
const daemonQuietEnv = "GOCACHED_DAEMON_QUIET"

// daemonStderr collects what the child of -d writes to standard error
// before it listens, at most daemonStderrMax bytes.
type daemonStderr struct {
	r, w *os.File
	done chan struct{}
	buf  []byte
}

const daemonStderrMax = 64 << 10

func newDaemonStderr() (*daemonStderr, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &daemonStderr{r: r, w: w, done: make(chan struct{})}, nil
}

// started closes the parent's copy of the write end and starts reading.
func (d *daemonStderr) started() {
	d.w.Close()
	go func() {
		defer close(d.done)
		chunk := make([]byte, 4096)
		for {
			n, err := d.r.Read(chunk)
			if len(d.buf) < daemonStderrMax {
				d.buf = append(d.buf, chunk[:min(n, daemonStderrMax-len(d.buf))]...)
			}
			if err != nil {
				return
			}
		}
	}()
}

// output is what the child wrote, once it has exited (its end closed).
func (d *daemonStderr) output() []byte {
	select {
	case <-d.done:
	case <-time.After(2 * time.Second):
	}
	return d.buf
}

func (d *daemonStderr) close() { d.r.Close() }
