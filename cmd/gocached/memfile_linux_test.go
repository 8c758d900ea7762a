//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// TestMemoryFileWarmRestart runs memcached's -e cycle on the real binary:
// a stop by SIGUSR1 keeps the cache for the next start with the same file;
// SIGTERM and SIGKILL leave nothing to trust, so the next start is empty
// and says so.
func TestMemoryFileWarmRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory")
	args := []string{"-e", file, "-m", "16", "-I", "256k", "-o", "slab_chunk_max=262144"}
	const n = 500
	fill := func(addr string) {
		mc := memcache.New(addr)
		mc.Timeout = 5 * time.Second
		for i := range n {
			v := strings.Repeat(fmt.Sprint(i%10), 10+i*97%100_000)
			if err := mc.Set(&memcache.Item{Key: fmt.Sprint("k", i), Value: []byte(v), Flags: uint32(i)}); err != nil {
				t.Fatalf("set k%d: %v", i, err)
			}
		}
	}
	count := func(addr string) int {
		mc := memcache.New(addr)
		mc.Timeout = 5 * time.Second
		found := 0
		for i := range n {
			it, err := mc.Get(fmt.Sprint("k", i))
			if err == memcache.ErrCacheMiss {
				continue
			}
			if err != nil {
				t.Fatalf("get k%d: %v", i, err)
			}
			if want := strings.Repeat(fmt.Sprint(i%10), 10+i*97%100_000); string(it.Value) != want || it.Flags != uint32(i) {
				t.Fatalf("k%d: %d bytes flags %d after the restart, want %d bytes flags %d", i, len(it.Value), it.Flags, len(want), i)
			}
			found++
		}
		return found
	}
	stop := func(s *server, sig syscall.Signal, wantCode int) {
		t.Helper()
		if err := s.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if code := s.wait(t); code != wantCode {
			t.Fatalf("exit %d after %v, want %d; stderr:\n%s", code, sig, wantCode, s.stderr)
		}
	}

	s := startServer(t, args...)
	fill(s.addr)
	stored := count(s.addr)
	if stored < n/2 {
		t.Fatalf("only %d of %d items stored", stored, n)
	}
	stop(s, syscall.SIGUSR1, 0)
	if log := s.stderr.String(); !strings.Contains(log, fmt.Sprintf("saved %d items", stored)) {
		t.Errorf("log does not report %d items saved:\n%s", stored, log)
	}

	s = startServer(t, args...)
	if got := count(s.addr); got != stored {
		t.Errorf("after a graceful stop: %d items served, want %d", got, stored)
	}
	if log := s.stderr.String(); !strings.Contains(log, fmt.Sprintf("restored %d items", stored)) {
		t.Errorf("log does not report the restore:\n%s", log)
	}
	stop(s, syscall.SIGKILL, -1)

	s = startServer(t, args...)
	if got := count(s.addr); got != 0 {
		t.Errorf("after SIGKILL: %d items served, want none", got)
	}
	if log := s.stderr.String(); !strings.Contains(log, "starting empty") {
		t.Errorf("log does not say the cache starts empty:\n%s", log)
	}
	fill(s.addr)
	stop(s, syscall.SIGTERM, 0)
	s = startServer(t, args...)
	if got := count(s.addr); got != 0 {
		t.Errorf("after SIGTERM: %d items served, want none (only SIGUSR1 saves)", got)
	}
}
