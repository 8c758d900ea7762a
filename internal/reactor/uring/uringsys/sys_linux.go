//go:build linux

package uringsys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI, from include/uapi/linux/io_uring.h: only what gocached's
// engine (and the benchmark floor that mirrors it) uses; the values are
// fixed ABI.
const (
	OpNop         = 0
	OpPollAdd     = 6
	OpAccept      = 13
	OpAsyncCancel = 14
	OpSendmsg     = 9
	OpSend        = 26
	OpRecv        = 27

	SQEBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT

	SetupCQSize         = 1 << 3
	SetupRDisabled      = 1 << 6
	SetupSubmitAll      = 1 << 7
	SetupCoopTaskrun    = 1 << 8
	SetupSingleIssuer   = 1 << 12
	SetupDeferTaskrun   = 1 << 13
	PollAddMulti        = 1 << 0 // IORING_POLL_ADD_MULTI, in SQE.Len
	RecvMultishot       = 1 << 1 // IORING_RECV_MULTISHOT, in SQE.IOPrio
	RecvPollFirst       = 1 << 0 // IORING_RECVSEND_POLL_FIRST (5.19), in SQE.IOPrio
	AcceptMultishot     = 1 << 0 // IORING_ACCEPT_MULTISHOT, in SQE.IOPrio
	AsyncCancelAll      = 1 << 0
	CQEFBuffer          = 1 << 0
	CQEFMore            = 1 << 1
	CQEBufferShift      = 16
	EnterGetEvents      = 1 << 0
	EnterExtArg         = 1 << 3
	EnterRegisteredRing = 1 << 4
	FeatExtArg          = 1 << 8
	SQCQOverflow        = 1 << 1 // IORING_SQ_CQ_OVERFLOW in the SQ ring flags
	SQTaskrun           = 1 << 2 // IORING_SQ_TASKRUN

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	RegisterEnableRings = 12
	RegisterRingFDs     = 20
	RegisterPbufRing    = 22
	UnregisterPbufRing  = 23
	RegisterNAPI        = 27
	UnregisterNAPI      = 28
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

// Params is struct io_uring_params (120 bytes).
type Params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

// SQE is struct io_uring_sqe (64 bytes) with the unions reduced to the
// members gocached sets.
type SQE struct {
	Opcode   uint8
	Flags    uint8 // IOSQE_*
	IOPrio   uint16
	FD       int32
	Off      uint64
	Addr     uint64
	Len      uint32
	OpFlags  uint32 // msg_flags, accept_flags, cancel_flags, poll32_events
	UserData uint64
	BufGroup uint16
	_        uint16 // personality
	Optlen   uint32 // optlen: a multishot receive's total byte cap (6.17+); file_index
	_        [2]uint64
}

// CQE is struct io_uring_cqe (16 bytes; rings are not set up with CQE32).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32 // IORING_CQE_F_*; the buffer ID above CQEBufferShift
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

// NAPIReg is struct io_uring_napi for IORING_(UN)REGISTER_NAPI.
type NAPIReg struct {
	BusyPollTo     uint32
	PreferBusyPoll uint8
	Opcode         uint8
	_              [2]uint8
	OpParam        uint32
	_              uint32
}

// io_uring_napi opcodes and tracking strategies (static tracking: 6.13+).
const (
	NAPIRegisterOp    = 0
	NAPIStaticAddID   = 1
	NAPITrackDynamic  = 0
	NAPITrackStatic   = 1
	NAPITrackInactive = 255
)

// rsrcUpdate is struct io_uring_rsrc_update, for IORING_REGISTER_RING_FDS.
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

// Compile-time checks of the ABI sizes.
var (
	_ [120 - unsafe.Sizeof(Params{})]byte
	_ [unsafe.Sizeof(Params{}) - 120]byte
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [16 - unsafe.Sizeof(CQE{})]byte
	_ [40 - unsafe.Sizeof(bufReg{})]byte
	_ [16 - unsafe.Sizeof(NAPIReg{})]byte
	_ [unsafe.Sizeof(NAPIReg{}) - 16]byte
)

// Setup is io_uring_setup(2). It is a variable so tests can make the
// kernel look like one without io_uring.
var Setup = func(entries uint32, p *Params) (int, error) {
	fd, _, errno := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// enter is io_uring_enter(2). A loaded reactor waits as a raw system
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
func enter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSz uintptr, raw bool) (int, error) {
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

// enterNoWait is io_uring_enter(2) for submissions that never sleep, as a
// raw call: it skips the runtime's syscall bookkeeping.
func enterNoWait(fd int, toSubmit, flags uint32) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), 0, uintptr(flags), 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// Register is io_uring_register(2).
func Register(fd int, op uint32, arg unsafe.Pointer, nrArgs uint32) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(op), uintptr(arg), uintptr(nrArgs), 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}
