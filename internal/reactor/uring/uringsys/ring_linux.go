//go:build linux

package uringsys

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring is one io_uring instance: the submission and completion queues
// mapped into our memory. Only the thread that owns it (the single issuer) touches it; the
// kernel is the other party, synchronised through the atomic heads and
// tails as io_uring(7) prescribes (acquire loads of what the kernel writes,
// release stores of what we write).
type Ring struct {
	fd       int
	enterFD  int    // fd, or the registered ring's index once registerRingFD succeeded
	enterFlg uint32 // extra io_uring_enter flags (IORING_ENTER_REGISTERED_RING)
	flags    uint32 // setup flags the kernel accepted
	features uint32

	sqMem, cqMem, sqeMem []byte

	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqes                    []SQE
	sqLocal                 uint32 // our next tail, published by flushSQ
	sqPublished             uint32 // tail as last stored for the kernel

	cqHead, cqTail, cqOverflow *uint32
	cqMask, cqEntries          uint32
	cqes                       []CQE

	// The timeout io_uring_enter reads, kept here on the heap: the kernel
	// is handed their addresses as integers, which the Go stack would not
	// keep valid across a stack move.
	ts unix.Timespec
	ga getEventsArg
}

// NewRing sets up a Ring of entries SQEs and cqEntries CQEs with the given
// setup flags and maps it.
func NewRing(entries, cqEntries, flags uint32) (*Ring, error) {
	p := Params{flags: flags | SetupCQSize, cqEntries: cqEntries}
	fd, err := Setup(entries, &p)
	if err != nil {
		return nil, err
	}
	r := &Ring{fd: fd, enterFD: fd, flags: p.flags, features: p.features}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// FD is the ring's file descriptor.
func (r *Ring) FD() int { return r.fd }

// Flags are the setup flags the kernel accepted.
func (r *Ring) Flags() uint32 { return r.flags }

// SQEntries and CQEntries are the queues' sizes as the kernel made them.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

func (r *Ring) mapRings(p *Params) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(CQE{})))
	var err error
	// Rings are mapped separately even where IORING_FEAT_SINGLE_MMAP would
	// allow one mapping: it keeps the code to one path and costs one mmap.
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap SQ ring: %w", err)
	}
	if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap CQ ring: %w", err)
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(SQE{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap SQEs: %w", err)
	}
	u32 := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail, r.sqFlags = u32(r.sqMem, p.sqOff.head), u32(r.sqMem, p.sqOff.tail), u32(r.sqMem, p.sqOff.flags)
	r.sqMask, r.sqEntries = *u32(r.sqMem, p.sqOff.ringMask), *u32(r.sqMem, p.sqOff.ringEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	// The SQ index array maps ring slots to SQEs; identity, set once.
	array := unsafe.Slice(u32(r.sqMem, p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqLocal = atomic.LoadUint32(r.sqTail)
	r.sqPublished = r.sqLocal
	r.cqHead, r.cqTail, r.cqOverflow = u32(r.cqMem, p.cqOff.head), u32(r.cqMem, p.cqOff.tail), u32(r.cqMem, p.cqOff.overflow)
	r.cqMask, r.cqEntries = *u32(r.cqMem, p.cqOff.ringMask), *u32(r.cqMem, p.cqOff.ringEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	return nil
}

// Close unmaps the rings and closes the ring fd; the kernel cancels what is
// still in flight.
func (r *Ring) Close() {
	for _, m := range [][]byte{r.sqeMem, r.cqMem, r.sqMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	r.sqeMem, r.cqMem, r.sqMem, r.sqes, r.cqes = nil, nil, nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// Pending is the number of SQEs prepared but not yet handed to the kernel.
func (r *Ring) Pending() uint32 { return r.sqLocal - atomic.LoadUint32(r.sqHead) }

// GetSQE returns a zeroed SQE to fill, submitting what is queued when the
// queue is full; nil only when the kernel takes nothing (a fatal state).
func (r *Ring) GetSQE() *SQE {
	if r.sqLocal-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		if _, err := r.Submit(); err != nil || r.sqLocal-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
			return nil
		}
	}
	s := &r.sqes[r.sqLocal&r.sqMask]
	*s = SQE{}
	r.sqLocal++
	return s
}

// FlushSQ publishes the prepared SQEs to the kernel and returns how many
// are waiting for io_uring_enter.
func (r *Ring) FlushSQ() uint32 {
	if r.sqLocal != r.sqPublished {
		atomic.StoreUint32(r.sqTail, r.sqLocal)
		r.sqPublished = r.sqLocal
	}
	return r.sqLocal - atomic.LoadUint32(r.sqHead)
}

// Submit hands the queued SQEs to the kernel without waiting.
func (r *Ring) Submit() (int, error) {
	n := r.FlushSQ()
	if n == 0 {
		return 0, nil
	}
	for range 8 { // EINTR from the runtime's preemption signals: retry, bounded
		got, err := enterNoWait(r.enterFD, n, r.enterFlg)
		if err == unix.EINTR {
			continue
		}
		return got, err
	}
	return 0, unix.EINTR
}

// SubmitAndWait submits the queued SQEs and waits for at least one
// completion, at most timeoutNs (< 0: no limit; 0: do not wait). EINTR and
// ETIME are not errors: the caller reaps whatever is there.
//
// (Waiting for a batch instead, with min_complete > 1 and min_wait_usec,
// so that a loaded reactor wakes once per batch, was measured: at 16x16 it
// cost 40% of the throughput and 30% more CPU per request, at 64x1 it
// gained nothing. Waiting for the iteration's own sends plus one new
// event, so that the sends' completions alone do not end the wait, halved
// the enters at one connection but made each round trip slower, by more
// than the enter it saved.)
//
// raw chooses how the wait is made (see enter): as a raw system call
// while the reactor is busy, through the runtime when it is idle.
func (r *Ring) SubmitAndWait(timeoutNs int64, raw bool) (int, error) {
	n := r.FlushSQ()
	flags := uint32(EnterGetEvents) | r.enterFlg
	var minComplete uint32
	var arg unsafe.Pointer
	var argSz uintptr
	switch {
	case timeoutNs == 0:
		// GETEVENTS with min 0 still runs the deferred task work that
		// turns finished socket operations into CQEs.
	case timeoutNs > 0 && r.features&FeatExtArg != 0:
		r.ts = unix.NsecToTimespec(timeoutNs)
		r.ga = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
		arg, argSz = unsafe.Pointer(&r.ga), unsafe.Sizeof(r.ga)
		flags |= EnterExtArg
		minComplete = 1
	default:
		minComplete = 1
	}
	got, err := enter(r.enterFD, n, minComplete, flags, arg, argSz, raw || minComplete == 0)
	switch err {
	case nil, unix.EINTR, unix.ETIME, unix.EBUSY, unix.EAGAIN:
		// EBUSY/EAGAIN: the CQ overflowed; reaping makes room.
		return max(got, 0), nil
	}
	return got, err
}

// Ready is the number of CQEs waiting to be reaped.
func (r *Ring) Ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// Reap moves up to len(dst) completions out of the CQ ring. They are copied
// so the ring has room again before the caller handles them (handling
// submits, and the kernel may then post more).
func (r *Ring) Reap(dst []CQE) int {
	head := *r.cqHead // only we write the CQ head
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for head != tail && n < len(dst) {
		dst[n] = r.cqes[head&r.cqMask]
		head++
		n++
	}
	if n > 0 {
		atomic.StoreUint32(r.cqHead, head)
	}
	return n
}

// Enable starts a ring set up with IORING_SETUP_R_DISABLED. Called on the
// reactor's locked thread, it makes that thread the single issuer.
func (r *Ring) Enable() error {
	if r.flags&SetupRDisabled == 0 {
		return nil
	}
	_, err := Register(r.fd, RegisterEnableRings, nil, 0)
	return err
}

// RegisterRingFD registers the ring fd with the calling thread so that
// io_uring_enter skips the per-call fd lookup. It is a per-thread
// registration, so it is done on the reactor's locked thread; failure only
// costs that optimisation.
func (r *Ring) RegisterRingFD() bool {
	u := rsrcUpdate{offset: ^uint32(0), data: uint64(r.fd)}
	if n, err := Register(r.fd, RegisterRingFDs, unsafe.Pointer(&u), 1); err != nil || n != 1 {
		return false
	}
	r.enterFD, r.enterFlg = int(u.offset), EnterRegisteredRing
	return true
}
