package testproc

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
)

// Cmd is an exec.Cmd whose process dies with the test binary that started
// it. A test binary that panics on its -timeout, or is killed, runs no
// cleanup: without this its servers and tools would outlive it (seen:
// a gocached and a memcached still running an hour after a timed-out run).
//
// On Linux the child gets a parent-death signal (SIGKILL). The kernel sends
// it when the *thread* that forked the child exits, and Go ends a thread
// whose goroutine exits while locked to it (the testbed's namespace dialers
// do, on purpose): so every Cmd is forked from one goroutine that stays
// locked to its thread for the life of the test binary.
//
// Cmd embeds *exec.Cmd, so its fields and Wait are exec's; Start, Run,
// Output and CombinedOutput are replaced to fork from that thread.
//
// A child that changes its identity (a server dropping root with -u) loses
// the parent-death signal; for those, as root, a watchdog process kills it
// when the test binary dies (see watchdog). Wait releases the watchdog: a
// Cmd started must be waited for through Cmd's Wait, as an exec.Cmd must.
type Cmd struct {
	*exec.Cmd
	dog *watchdog
}

// Command is exec.Command for a process that must not outlive the test.
func Command(name string, arg ...string) *Cmd {
	return &Cmd{Cmd: exec.Command(name, arg...)}
}

// CommandContext is exec.CommandContext for a process that must not
// outlive the test.
func CommandContext(ctx context.Context, name string, arg ...string) *Cmd {
	return &Cmd{Cmd: exec.CommandContext(ctx, name, arg...)}
}

// Start starts the process with the parent-death signal set.
func (c *Cmd) Start() error {
	setParentDeathSignal(c.Cmd)
	if err := spawn(c.Cmd.Start); err != nil {
		return err
	}
	c.dog = startWatchdog(c.Process.Pid)
	return nil
}

// Wait waits for the process as exec's Wait does, then lets its watchdog go.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.dog.release()
	return err
}

// Run starts the process and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the process and returns its standard output. As exec's, an
// *exec.ExitError carries the standard error when the caller set none.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("testproc: Stdout already set")
	}
	var stdout, stderr bytes.Buffer
	c.Stdout = &stdout
	captureErr := c.Stderr == nil
	if captureErr {
		c.Stderr = &stderr
	}
	err := c.Run()
	var ee *exec.ExitError
	if captureErr && errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the process and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("testproc: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}
