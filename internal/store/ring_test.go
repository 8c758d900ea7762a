package store

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestSuiteOverMappedRings runs every other test of the package again with
// the rings mapped outside the Go heap.
func TestSuiteOverMappedRings(t *testing.T) {
	if *mmapRings {
		t.Skip("already running over mapped rings")
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^Test", "-test.skip=^TestSuiteOverMappedRings$", "-store.mmap")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("suite over mapped rings: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("no PASS in:\n%s", out)
	}
}

func TestMappedRingsAreOffHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("rings are mapped on Linux only")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newTestStore(t, Config{MemoryLimit: 256 << 20, Mmap: true})
	for i := range 100000 {
		set(s, fmt.Sprintf("k%d", i), strings.Repeat("v", 1000))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
		t.Fatalf("heap grew %d MB for a 256 MB mapped store", grown>>20)
	}
	if _, _, ok := get(s, "k99999"); !ok {
		t.Fatal("item lost")
	}
	// Resizing replaces (and unmaps) the rings.
	if err := s.SetMemoryLimit(128 << 20); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if _, _, ok := get(s, "k99999"); !ok {
		t.Fatal("newest item lost in the shrink")
	}
}

func TestLargePagesFixLimit(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, LargePages: true})
	set(s, "a", "v")
	if err := s.SetMemoryLimit(32 << 20); err != ErrMemoryLimit {
		t.Fatalf("SetMemoryLimit under LargePages: %v", err)
	}
	if v, _, ok := get(s, "a"); !ok || v != "v" {
		t.Fatal("item lost")
	}
}
