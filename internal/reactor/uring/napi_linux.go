//go:build linux

package uring

import (
	"errors"
	"unsafe"

	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// napiState is a ring's NAPI busy-poll registration as the kernel reports it.
type napiState struct {
	busyPollUsecs uint32
	prefer        bool
	tracking      uint32 // uringsys.NAPITrack*; uringsys.NAPITrackInactive when not registered
}

func (s napiState) trackingName() string {
	switch s.tracking {
	case uringsys.NAPITrackStatic:
		return "static"
	case uringsys.NAPITrackDynamic:
		return "dynamic"
	}
	return "off"
}

// uringsys.RegisterNAPI turns on NAPI busy polling for the ring (IORING_REGISTER_NAPI,
// 6.9+): while waiting for completions the kernel polls the NAPIs the ring
// tracks for up to usecs. Static tracking (6.13+) polls exactly the IDs the
// reactor adds, which is what the NAPI routing gives each reactor; a kernel
// without it gets dynamic tracking, where the ring learns the IDs of the
// sockets it touches. The settings are read back: the kernel returns the
// previous ones on every call, so a second identical call confirms them.
func registerNAPI(r *uringsys.Ring, usecs uint32, prefer bool) (napiState, error) {
	var err error
	for _, mode := range []uint32{uringsys.NAPITrackStatic, uringsys.NAPITrackDynamic} {
		if err = napiOp(r, uringsys.NAPIRegisterOp, usecs, prefer, mode, nil); err == nil {
			var got uringsys.NAPIReg
			if err = napiOp(r, uringsys.NAPIRegisterOp, usecs, prefer, mode, &got); err != nil {
				break
			}
			return napiState{busyPollUsecs: got.BusyPollTo, prefer: got.PreferBusyPoll != 0, tracking: got.OpParam}, nil
		}
		if !errors.Is(err, unix.EINVAL) {
			break
		}
	}
	return napiState{tracking: uringsys.NAPITrackInactive}, err
}

// addNAPIID adds id to a statically tracking ring.
func addNAPIID(r *uringsys.Ring, id uint32) error {
	return napiOp(r, uringsys.NAPIStaticAddID, 0, false, id, nil)
}

func napiOp(r *uringsys.Ring, op uint8, usecs uint32, prefer bool, param uint32, prev *uringsys.NAPIReg) error {
	n := uringsys.NAPIReg{BusyPollTo: usecs, Opcode: op, OpParam: param}
	if prefer {
		n.PreferBusyPoll = 1
	}
	_, err := uringsys.Register(r.FD(), uringsys.RegisterNAPI, unsafe.Pointer(&n), 1)
	if prev != nil {
		*prev = n // the kernel copied the settings in force before the call
	}
	return err
}

// napiUnsupported reports whether err means the kernel has no io_uring NAPI
// busy polling (before 6.9, or without CONFIG_NET_RX_BUSY_POLL).
func napiUnsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}
