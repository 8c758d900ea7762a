//go:build linux

package epoll

import (
	"fmt"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// reuseportFallback is what the steering program returns when it cannot choose:
// an index at or beyond the group size makes the kernel pick a listener by hash.
const reuseportFallback = 0xffffffff

// reuseportSteering returns the classic-BPF program that picks, for every SYN
// arriving at a SO_REUSEPORT group of n listeners, the listener of the reactor
// serving the packet's RX queue. The queue extension (SKF_AD_QUEUE) yields the
// skb's queue_mapping: rx queue + 1 where the driver records it, the raw queue
// index on veth (whose queue_mapping is the sender's tx queue, i.e. our rx
// queue), and 0 on loopback. Queue value q goes to listener q mod n, so each
// queue, and hence each NAPI, always lands on the same reactor; which reactor
// owns which NAPI is learned from the accepted sockets, so the rotation by one
// on recording drivers does not matter.
//
// zeroIsQueue says that 0 is a real queue (the listen address is on one
// device with NAPIs). Otherwise 0 means "no queue" (loopback, or a wildcard
// address reached over lo) and the program falls back to the kernel's hash,
// which spreads those connections over all reactors instead of piling them
// onto listener 0. The acceptor's NAPI handoff corrects whatever the program
// gets wrong.
func reuseportSteering(n int, zeroIsQueue bool) ([]bpf.Instruction, error) {
	if n < 1 {
		return nil, fmt.Errorf("reuseport steering: group size %d", n)
	}
	prog := []bpf.Instruction{bpf.LoadExtension{Num: bpf.ExtQueue}}
	if !zeroIsQueue {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 2})
	}
	prog = append(prog,
		bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(n)},
		bpf.RetA{},
	)
	if !zeroIsQueue {
		prog = append(prog, bpf.RetConstant{Val: reuseportFallback})
	}
	return prog, nil
}

// attachReuseportSteering assembles the steering program for a group of n
// listeners and attaches it to the group through fd, one of its sockets.
func attachReuseportSteering(fd, n int, zeroIsQueue bool) error {
	prog, err := reuseportSteering(n, zeroIsQueue)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("assemble reuseport steering: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &fprog); err != nil {
		return fmt.Errorf("SO_ATTACH_REUSEPORT_CBPF: %w", err)
	}
	return nil
}
