//go:build linux

package reactor

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
// skb's queue_mapping, which is rx queue + 1 when the driver recorded one and 0
// when not; queue q (1-based) goes to listener (q-1) mod n, so each queue, and
// hence each NAPI, always lands on the same reactor. Unrecorded queues fall back
// to the kernel's hash; the acceptor's NAPI handoff corrects those.
func reuseportSteering(n int) ([]bpf.Instruction, error) {
	if n < 1 {
		return nil, fmt.Errorf("reuseport steering: group size %d", n)
	}
	return []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtQueue},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 3},
		bpf.ALUOpConstant{Op: bpf.ALUOpSub, Val: 1},
		bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(n)},
		bpf.RetA{},
		bpf.RetConstant{Val: reuseportFallback},
	}, nil
}

// attachReuseportSteering assembles the steering program for a group of n
// listeners and attaches it to the group through fd, one of its sockets.
func attachReuseportSteering(fd, n int) error {
	prog, err := reuseportSteering(n)
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
