//go:build linux

package main

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run in the host namespace without the testbed: loopback has
// no NAPIs, so none of them writes a kernel knob.

// TestPollModeOnLoopbackRunsAsBase: a mode with no NAPI to act on says so
// in one line and serves as base, without busy polling.
func TestPollModeOnLoopbackRunsAsBase(t *testing.T) {
	for _, engine := range []string{"go", "epoll"} {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, "--engine="+engine, "--poll-mode", "suspend20")
			nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			if engine == "epoll" {
				stats := readStats(t, nc, "reactors")
				for name, v := range stats {
					switch {
					case strings.HasSuffix(name, ":poll_mode") && v != "base":
						t.Errorf("stats %s = %q, want base", name, v)
					case strings.HasSuffix(name, ":prefer_busy_poll") && v != "0",
						strings.HasSuffix(name, ":busy_poll_usecs") && v != "0":
						t.Errorf("stats %s = %q, want 0: base must not busy poll", name, v)
					}
				}
				if _, ok := stats["reactor:0:poll_mode"]; !ok {
					t.Errorf("stats reactors has no reactor:0:poll_mode: %v", stats)
				}
			}
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t); code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			log := s.stderr.String()
			if n := strings.Count(log, "no NAPI to act on"); n != 1 || !strings.Contains(log, "mode=suspend20") {
				t.Errorf("want one line saying suspend20 has no NAPI to act on; log:\n%s", log)
			}
			if strings.Contains(log, "poll mode applied") {
				t.Errorf("knobs were applied on loopback; log:\n%s", log)
			}
		})
	}
}

func TestPollModeUnknownInterface(t *testing.T) {
	for _, args := range [][]string{
		{"--poll-mode", "suspend20", "--interface", "gocached-none0"},
		{"--defer-hard-irqs", "100", "--interface", "gocached-none0"},
	} {
		_, stderr, code := runBinary(t, append([]string{"-l", "127.0.0.1", "-p", "-1"}, args...)...)
		if code != 1 || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "--interface gocached-none0: no such interface") {
			t.Errorf("%q: exit %d stderr %q, want 1 and one line saying the interface does not exist", args, code, stderr)
		}
	}
}

// TestDoctorOnLoopback: doctor finds no NAPIs on lo; that is only a warning
// without a mode and a failure for a mode that needs NAPIs.
func TestDoctorOnLoopback(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"doctor", "--interface", "lo"}, 0},
		{[]string{"doctor", "--interface", "lo", "--poll-mode", "suspend20"}, 1},
	}
	for _, tt := range tests {
		stdout, stderr, code := runBinary(t, tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stdout:\n%s\nstderr: %s", tt.args, code, tt.code, stdout, stderr)
		}
		if !strings.Contains(stdout, "interface lo: no NAPIs") {
			t.Errorf("%q: report does not say lo has no NAPIs:\n%s", tt.args, stdout)
		}
	}
}
