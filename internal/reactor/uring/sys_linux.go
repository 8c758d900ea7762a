//go:build linux

package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI this package uses, from include/uapi/linux/io_uring.h.
// Only what the engine needs is here; the values are fixed ABI.
const (
	opPollAdd     = 6
	opAccept      = 13
	opAsyncCancel = 14
	opSend        = 26
	opRecv        = 27

	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT

	setupCQSize        = 1 << 3
	setupRDisabled     = 1 << 6
	setupSubmitAll     = 1 << 7
	setupCoopTaskrun   = 1 << 8
	setupSingleIssuer  = 1 << 12
	setupDeferTaskrun  = 1 << 13
	pollAddMulti       = 1 << 0 // IORING_POLL_ADD_MULTI, in sqe.len
	recvMultishot      = 1 << 1 // IORING_RECV_MULTISHOT, in sqe.ioprio
	recvPollFirst      = 1 << 0 // IORING_RECVSEND_POLL_FIRST (5.19), in sqe.ioprio
	acceptMultishot    = 1 << 0 // IORING_ACCEPT_MULTISHOT, in sqe.ioprio
	asyncCancelAll     = 1 << 0
	cqeFBuffer         = 1 << 0
	cqeFMore           = 1 << 1
	cqeBufferShift     = 16
	enterGetEvents     = 1 << 0
	enterExtArg        = 1 << 3
	enterRegisteredRng = 1 << 4
	featExtArg         = 1 << 8
	sqCQOverflow       = 1 << 1 // IORING_SQ_CQ_OVERFLOW in the SQ ring flags
	sqTaskrun          = 1 << 2 // IORING_SQ_TASKRUN

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	registerEnableRings = 12
	registerRingFDs     = 20
	registerPbufRing    = 22
	unregisterPbufRing  = 23
	registerNAPI        = 27
	unregisterNAPI      = 28
)

// sqRingOffsets and cqRingOffsets are struct io_sqring_offsets and
// io_cqring_offsets: where each field lives in the mmapped rings.
type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// params is struct io_uring_params (120 bytes).
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

// sqe is struct io_uring_sqe (64 bytes) with the unions reduced to the
// members this package sets.
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32 // msg_flags, accept_flags, cancel_flags, poll32_events
	userData uint64
	bufGroup uint16
	_        uint16 // personality
	optlen   uint32 // optlen: a multishot receive's total byte cap (6.17+); file_index
	_        [2]uint64
}

// cqe is struct io_uring_cqe (16 bytes; the ring is not set up with CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// getEventsArg is struct io_uring_getevents_arg, passed with
// IORING_ENTER_EXT_ARG to give io_uring_enter a timeout.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// bufReg is struct io_uring_buf_reg for IORING_REGISTER_PBUF_RING.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// napiReg is struct io_uring_napi for IORING_(UN)REGISTER_NAPI.
type napiReg struct {
	busyPollTo     uint32
	preferBusyPoll uint8
	opcode         uint8
	pad            [2]uint8
	opParam        uint32
	resv           uint32
}

// io_uring_napi opcodes and tracking strategies (static tracking: 6.13+).
const (
	napiRegisterOp    = 0
	napiStaticAddID   = 1
	napiTrackDynamic  = 0
	napiTrackStatic   = 1
	napiTrackInactive = 255
)

// rsrcUpdate is struct io_uring_rsrc_update, for IORING_REGISTER_RING_FDS.
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

// Compile-time checks of the ABI sizes.
var (
	_ [120 - unsafe.Sizeof(params{})]byte
	_ [unsafe.Sizeof(params{}) - 120]byte
	_ [64 - unsafe.Sizeof(sqe{})]byte
	_ [unsafe.Sizeof(sqe{}) - 64]byte
	_ [16 - unsafe.Sizeof(cqe{})]byte
	_ [40 - unsafe.Sizeof(bufReg{})]byte
	_ [16 - unsafe.Sizeof(napiReg{})]byte
	_ [unsafe.Sizeof(napiReg{}) - 16]byte
)

// sysSetup is io_uring_setup(2). It is a variable so tests can make the
// kernel look like one without io_uring.
var sysSetup = func(entries uint32, p *params) (int, error) {
	fd, _, errno := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// sysEnter is io_uring_enter(2). A loaded reactor waits as a raw system
// call: the runtime's entersyscall/exitsyscall would let sysmon take the
// reactor's P after 20us of waiting and keep sysmon itself polling every
// 20us, which measured as about 10% of a loaded reactor's CPU (context
// switches and sleeps). The reactor owns its thread and, by the GOMAXPROCS
// bump in Serve, a P of its own, so holding the P while it waits costs
// nothing else, and stopping the world still works: the runtime's
// preemption signal ends the wait with EINTR and the loop comes round to a
// preemption point (TestStopTheWorldWhileIdle). An idle reactor waits
// through the runtime instead (raw false): held for long, its P would draw
// sysmon's preemption signal every 10 ms.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSz uintptr, raw bool) (int, error) {
	call := unix.Syscall6
	if raw {
		call = unix.RawSyscall6
	}
	n, _, errno := call(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete),
		uintptr(flags), uintptr(arg), argSz)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// sysEnterNoWait is io_uring_enter(2) for submissions that never sleep, as a
// raw call: it skips the runtime's syscall bookkeeping.
func sysEnterNoWait(fd int, toSubmit, flags uint32) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), 0, uintptr(flags), 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// sysRegister is io_uring_register(2).
func sysRegister(fd int, op uint32, arg unsafe.Pointer, nrArgs uint32) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(op), uintptr(arg), uintptr(nrArgs), 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}
