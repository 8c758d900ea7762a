package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// binary is the gocached built once for the tests that run it as a process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gocached-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gocached")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err = testproc.GoBuild(ctx, gocachedPkg, binary)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building gocached:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	testproc.VerifyMain(m, func() { os.RemoveAll(dir) })
}

// gocachedPkg is this package, built by the tests that run it as a process.
const gocachedPkg = "github.com/gocached/gocached/cmd/gocached"

// runBinary runs gocached to completion with a time bound.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("gocached %q did not exit within 30 s", args)
	}
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running gocached %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestBadFlagsProcess: the process exits with the status run returns for a
// bad command line (TestBadCommandLines has the cases), prints nothing on
// stdout, and names itself in getopt's messages by argv[0], as glibc does.
func TestBadFlagsProcess(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--no-such-flag"}, 1, binary + ": unrecognized option '--no-such-flag'\nIllegal argument \"?\"\n"},
		{[]string{"-c", "0"}, 1, "Maximum connections must be greater than 0\n"},
		{[]string{"-I", "2m", "-m", "3"}, 64, "Cannot set item size limit higher than 1/2 of memory max.\n"},
		{[]string{"--engine", "rocket"}, 64, "gocached: unknown --engine \"rocket\" (want epoll, uring or go)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, tt.args...)
			if code != tt.code || stderr != tt.stderr || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d, %q, nothing", code, stderr, stdout, tt.code, tt.stderr)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string // all in stdout
	}{
		{[]string{"-V"}, []string{"gocached " + version + "\n"}},
		{[]string{"--version"}, []string{"gocached " + version + "\n"}},
		{[]string{"memcached", "-V"}, []string{"gocached " + version + "\n"}},
		{[]string{"-h"}, []string{"Usage: gocached", "-p, --port", "-m, --memory-limit", "-I, --max-item-size",
			"-N, --napi-ids", "--engine", "--busy-poll-budget", "--pin-cpus", "--poll-mode", "--interface", "--irq-suspend-timeout", "--napi-state"}},
		{[]string{"--help", "-U", "5"}, []string{"Usage: gocached"}}, // help wins over bad values
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Errorf("exit %d stderr %q, want 0 and nothing", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestSubcommands(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // substring; "" = nothing expected
		stderr string
	}{
		{[]string{"napi"}, 2, "", "missing napi subcommand"},
		{[]string{"napi", "frobnicate"}, 2, "", `unknown napi subcommand "frobnicate"`},
		{[]string{"napi", "help"}, 0, "napi restore", ""},
		{[]string{"napi", "show", "--interface", "gocached-none0"}, 1, "", `interface "gocached-none0" not found`},
		{[]string{"napi", "restore"}, 2, "", "--interface (or --state) is required"},
		{[]string{"doctor", "--no-such-flag"}, 2, "", "unknown flag: --no-such-flag"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if tt.stdout != "" && !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout, tt.stdout)
			}
			if tt.stderr != "" && (!strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "gocached")) {
				t.Errorf("stderr = %q, want one line from gocached containing %q", stderr, tt.stderr)
			}
		})
	}
}

// server is a gocached process serving on a free loopback port.
type server struct {
	cmd    *testproc.Cmd
	addr   string
	stderr *syncBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, set before exited closes
}

var servingRE = regexp.MustCompile(`msg="gocached serving" addr=(\S+)`)

func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	args = append([]string{"-p", "-1", "-l", "127.0.0.1", "-v"}, args...)
	return startProcess(t, testproc.Command(binary, args...))
}

// startProcess starts cmd, a gocached serving with -v, and waits for its
// "serving" line; the process is killed at the end of the test if still
// running, and the goroutines reading its log and waiting for it are done
// before the test ends.
func startProcess(t *testing.T, cmd *testproc.Cmd) *server {
	t.Helper()
	pr, pw := io.Pipe()
	s := &server{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gocached: %v", err)
	}
	go func() {
		s.err = cmd.Wait()
		pw.Close()
		close(s.exited)
	}()
	addrc := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.stderr.WriteLine(sc.Text())
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select { // the first listener's address; later ones only logged
				case addrc <- m[1]:
				default:
				}
			}
		}
		// A line too long for the scanner must not leave the server
		// blocked on a full pipe.
		io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			cmd.Process.Kill()
			<-s.exited
		}
		<-logDone
	})
	select {
	case s.addr = <-addrc:
	case <-s.exited:
		<-logDone // it may have logged its address just before exiting
		select {
		case s.addr = <-addrc:
			return s
		default:
		}
		t.Fatalf("gocached exited before it reported its address (%v); stderr:\n%s", s.err, s.stderr)
	case <-time.After(startTimeout):
		t.Fatalf("gocached did not report its address within %v; stderr:\n%s", startTimeout, s.stderr)
	}
	return s
}

// startTimeout bounds a server's start, generous for a loaded machine
// (a race build of the server under two other test binaries).
const startTimeout = 30 * time.Second

// wait waits for the process to exit and returns its status.
func (s *server) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-s.exited:
		err := s.err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatalf("waiting for gocached: %v", err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("gocached did not exit within 30 s; stderr:\n%s", s.stderr)
	}
	return -1
}

func TestSignalsShutDownCleanly(t *testing.T) {
	// memcached stops gracefully on SIGUSR1 as well.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startServer(t, "--engine=go")
			idle, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer idle.Close()
			// One round trip first: a connection still in the listen queue
			// when the listener closes is reset by the kernel (memcached's
			// too); the test is about an accepted, idle client.
			idle.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(idle, "version\r\n"); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(idle).ReadString('\n'); err != nil || !strings.HasPrefix(line, "VERSION ") {
				t.Fatalf("version before the signal: %q, %v", line, err)
			}
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t); code != 0 {
				t.Errorf("exit %d after %v, want 0; stderr:\n%s", code, sig, s.stderr)
			}
			idle.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := idle.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("idle client read %d bytes, err %v; want EOF after shutdown", n, err)
			}
			for _, w := range []string{"shutting down", "stopped"} {
				if !strings.Contains(s.stderr.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, s.stderr)
				}
			}
		})
	}
}

// A listener that cannot be set up exits 71 with memcached's line, then
// gocached's own naming the address and port.
func TestListenFailureExits71(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	_, stderr, code := runBinary(t, "--engine=go", "-l", "127.0.0.1", "-p", port)
	first, rest, _ := strings.Cut(stderr, "\n")
	if code != 71 || first != "failed to listen on one of interface(s) 127.0.0.1: Address already in use" ||
		!strings.Contains(rest, "127.0.0.1:"+port) {
		t.Errorf("exit %d stderr %q, want 71, memcached's line and a message naming the address", code, stderr)
	}
}
