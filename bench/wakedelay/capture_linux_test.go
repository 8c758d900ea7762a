package wakedelay

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
	"golang.org/x/sys/unix"
)

// needTracefs skips (fails under GOCACHED_REQUIRE_TESTBED=1) without root,
// and mounts tracefs where it is missing.
func needTracefs(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "needs root to trace the scheduler"
	default:
		if _, err := os.Stat(filepath.Join(Tracefs, "trace")); err != nil {
			if err := unix.Mount("nodev", Tracefs, "tracefs", 0, ""); err != nil {
				why = "tracefs is not mounted and cannot be: " + err.Error()
			}
		}
	}
	if why == "" {
		return
	}
	if testproc.Required() {
		t.Fatal(why + " (GOCACHED_REQUIRE_TESTBED=1)")
	}
	t.Skip(why)
}

// A thread that sleeps and wakes shows up in a capture with its wake-ups,
// and the capture leaves tracefs's switches as it found them.
func TestCaptureSeesAThreadWake(t *testing.T) {
	needTracefs(t)
	enable := filepath.Join(Tracefs, "events/sched/sched_switch/enable")
	before, err := os.ReadFile(enable)
	if err != nil {
		t.Fatal(err)
	}
	tid := make(chan int)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a thread of its own that wakes every millisecond
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Nanosleep(&unix.Timespec{Nsec: int64(time.Millisecond)}, nil)
		}
	}()
	me := <-tid
	trace, err := Capture(300 * time.Millisecond)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Parse(bytes.NewReader(trace), me, map[int]bool{me: true})
	if err != nil {
		t.Fatal(err)
	}
	// 300 sleeps of a millisecond at most; a loaded machine stretches
	// them, so ask for far fewer.
	if rep.Wakeups < 20 || len(rep.Delays) < 20 {
		t.Errorf("thread %d: %d wake-ups and %d waits in 300 ms of 1 ms sleeps, want at least 20", me, rep.Wakeups, len(rep.Delays))
	}
	after, err := os.ReadFile(enable)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("sched_switch enable was %q before the capture, %q after", before, after)
	}
}
