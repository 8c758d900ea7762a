//go:build unix

package main

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

// daemonize runs this program again in the background, in a session of its
// own with standard input and output on /dev/null (standard error too unless
// -v, as memcached keeps it when verbose), and returns the parent's exit
// status once the child listens: 0, or 1 with the reason when it failed.
func daemonize(args []string, verbose bool, stderr io.Writer) int {
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
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if verbose {
		cmd.Stderr = os.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintf(stderr, "gocached: -d: %v\n", err)
		return 1
	}
	w.Close()
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
		fmt.Fprintf(stderr, "gocached: -d: the server did not start (%v); run without -d to see why\n", state)
		return 1
	case <-time.After(daemonStartLimit):
		fmt.Fprintf(stderr, "gocached: -d: the server did not listen within %v (pid %d left running)\n", daemonStartLimit, cmd.Process.Pid)
		return 1
	}
}

// inDaemonChild reports whether this process is the background child of -d.
func inDaemonChild() bool { return os.Getenv(daemonReadyEnv) != "" }

// notifyDaemonParent tells the waiting parent of -d that the server
// listens, then closes the pipe; outside -d it does nothing.
func notifyDaemonParent() {
	fd, err := strconv.Atoi(os.Getenv(daemonReadyEnv))
	if err != nil || fd < 3 {
		return
	}
	f := os.NewFile(uintptr(fd), "daemon-ready")
	f.WriteString("ready\n")
	f.Close()
	os.Unsetenv(daemonReadyEnv)
}
