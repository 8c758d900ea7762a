//go:build linux

package uringsys

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// engineFlags are the setup flags gocached's engine uses (uring.ringFlags).
const engineFlags = SetupSingleIssuer | SetupDeferTaskrun | SetupSubmitAll | SetupRDisabled

// testRing sets up a Ring with the engine's flags on the calling thread,
// which it locks: with SINGLE_ISSUER only that thread may submit. Where
// this system has no usable io_uring the test is skipped.
func testRing(t *testing.T, entries, cq uint32) *Ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := NewRing(entries, cq, engineFlags)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skip("no usable io_uring:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Enable(); err != nil {
		t.Fatal(err)
	}
	return r
}

func reapAllOf(r *Ring) []CQE {
	var out []CQE
	buf := make([]CQE, 3) // small, so reaping itself wraps too
	for range 1000 {
		n := r.Reap(buf)
		if n == 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	return out
}

// TestRingWraparound pushes many times the ring's size through the SQ and
// the CQ, in batches that do not divide the ring size, so both heads and
// tails wrap over the masks (and the 32-bit counters keep increasing).
func TestRingWraparound(t *testing.T) {
	r := testRing(t, 4, 8)
	if r.sqEntries != 4 || r.cqEntries != 8 {
		t.Fatalf("Ring %d/%d, want 4/8", r.sqEntries, r.cqEntries)
	}
	next := uint64(0)
	for round := range 100 {
		batch := 1 + round%3
		for range batch {
			s := r.GetSQE()
			if s == nil {
				t.Fatal("no SQE")
			}
			s.Opcode, s.UserData = OpNop, next
			next++
		}
		if _, err := r.SubmitAndWait(0, true); err != nil {
			t.Fatal(err)
		}
		got := reapAllOf(r)
		if len(got) != batch {
			t.Fatalf("round %d: %d CQEs, want %d", round, len(got), batch)
		}
		for i, c := range got {
			if want := next - uint64(batch) + uint64(i); c.UserData != want || c.Res != 0 {
				t.Fatalf("round %d: CQE %d = %+v, want user data %d", round, i, c, want)
			}
		}
	}
	if r.sqLocal < 4*40 {
		t.Errorf("SQ tail %d: did not wrap many times", r.sqLocal)
	}
}

// TestRingFullSQAndCQOverflow: more SQEs than the SQ holds are submitted
// early by getSQE, and more completions than the CQ holds are kept by the
// kernel (IORING_FEAT_NODROP) and delivered on later enters, none lost.
func TestRingFullSQAndCQOverflow(t *testing.T) {
	r := testRing(t, 4, 8)
	const total = 30
	for i := range total {
		s := r.GetSQE()
		if s == nil {
			t.Fatalf("no SQE at %d", i)
		}
		s.Opcode, s.UserData = OpNop, uint64(i)
	}
	seen := make(map[uint64]bool)
	for range 20 {
		if _, err := r.SubmitAndWait(0, true); err != nil {
			t.Fatal(err)
		}
		for _, c := range reapAllOf(r) {
			seen[c.UserData] = true
		}
		if len(seen) == total {
			break
		}
	}
	if len(seen) != total {
		t.Fatalf("%d distinct completions, want %d", len(seen), total)
	}
}

// TestBufRingRecycling receives many more messages than the buffer Ring
// has buffers through one multishot receive: it works only if every buffer
// goes back to the kernel, and the buffer IDs cycle through all of them.
func TestBufRingRecycling(t *testing.T) {
	r := testRing(t, 8, 64)
	const nbuf, size = 4, 64
	b, err := NewBufRing(nbuf, size, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := b.Register(r.fd); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	arm := func() {
		s := r.GetSQE()
		s.Opcode, s.FD, s.IOPrio, s.Flags, s.BufGroup = OpRecv, int32(fds[1]), RecvMultishot, SQEBufferSelect, 7
		s.UserData = 1
	}
	arm()
	ids := make(map[uint16]int)
	for i := range 5 * nbuf {
		msg := bytes.Repeat([]byte{byte('a' + i%26)}, 10+i)
		if _, err := unix.Write(fds[0], msg); err != nil {
			t.Fatal(err)
		}
		b.Publish()
		if _, err := r.SubmitAndWait(-1, true); err != nil {
			t.Fatal(err)
		}
		got := reapAllOf(r)
		if len(got) != 1 {
			t.Fatalf("message %d: %d CQEs", i, len(got))
		}
		c := got[0]
		if c.Res != int32(len(msg)) || c.Flags&CQEFBuffer == 0 {
			t.Fatalf("message %d: CQE %+v, want %d bytes in a buffer", i, c, len(msg))
		}
		id := uint16(c.Flags >> CQEBufferShift)
		if data := b.Buf(id, int(c.Res)); !bytes.Equal(data, msg) {
			t.Fatalf("message %d: buffer %d holds %q", i, id, data)
		}
		ids[id]++
		b.Recycle(id)
		if c.Flags&CQEFMore == 0 {
			arm()
		}
	}
	if len(ids) != nbuf {
		t.Errorf("buffer IDs used %v, want all %d", ids, nbuf)
	}
	b.Publish()
	if b.Published() != b.tail {
		t.Errorf("published tail %d, ours %d", b.Published(), b.tail)
	}
}

// TestBufRingExhaustion: without recycling, the receive that finds no
// buffer ends with ENOBUFS, which is what the engine re-arms after.
func TestBufRingExhaustion(t *testing.T) {
	r := testRing(t, 8, 64)
	b, err := NewBufRing(2, 64, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := b.Register(r.fd); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	s := r.GetSQE()
	s.Opcode, s.FD, s.IOPrio, s.Flags, s.BufGroup = OpRecv, int32(fds[1]), RecvMultishot, SQEBufferSelect, 3
	var last CQE
	for i := range 3 {
		if _, err := unix.Write(fds[0], []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.SubmitAndWait(-1, true); err != nil {
			t.Fatal(err)
		}
		for _, c := range reapAllOf(r) {
			last = c
		}
		if i < 2 && last.Res != 1 {
			t.Fatalf("message %d: %+v", i, last)
		}
	}
	if last.Res != -int32(unix.ENOBUFS) || last.Flags&CQEFMore != 0 {
		t.Fatalf("third receive: %+v, want a final ENOBUFS", last)
	}
}

// TestSQEAndStructLayout pins the ABI offsets the kernel reads.
func TestSQEAndStructLayout(t *testing.T) {
	var s SQE
	for name, got := range map[string]uintptr{
		"fd": unsafe.Offsetof(s.FD), "off": unsafe.Offsetof(s.Off), "addr": unsafe.Offsetof(s.Addr),
		"len": unsafe.Offsetof(s.Len), "op_flags": unsafe.Offsetof(s.OpFlags),
		"user_data": unsafe.Offsetof(s.UserData), "buf_group": unsafe.Offsetof(s.BufGroup),
		"optlen": unsafe.Offsetof(s.Optlen),
	} {
		want := map[string]uintptr{"fd": 4, "off": 8, "addr": 16, "len": 24, "op_flags": 28,
			"user_data": 32, "buf_group": 40, "optlen": 44}[name]
		if got != want {
			t.Errorf("SQE.%s at %d, want %d", name, got, want)
		}
	}
	var p Params
	if off := unsafe.Offsetof(p.sqOff); off != 40 {
		t.Errorf("Params.sq_off at %d, want 40", off)
	}
	if off := unsafe.Offsetof(p.cqOff); off != 80 {
		t.Errorf("Params.cq_off at %d, want 80", off)
	}
}
