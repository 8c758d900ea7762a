//go:build linux

// Command uringfloor is the io_uring floor of enginecmp's comparison, the
// twin of bench/cmd/epollfloor: the least user-space work a memcached
// text-protocol server can do (package bench/floor: every "get KEY" a hit
// of a fixed 100-byte value, every "set" STORED, nothing kept), driven
// through the kernel exactly as gocached's io_uring engine drives it, on
// the engine's own ring code (internal/reactor/uring/uringsys):
//
//   - a ring set up with SINGLE_ISSUER, DEFER_TASKRUN, SUBMIT_ALL and
//     R_DISABLED, enabled on the serving thread, its fd registered with
//     that thread; the engine's SQ, CQ and buffer-ring sizes;
//   - a multishot accept; TCP_NODELAY on every connection;
//   - a single-shot receive per connection into a provided-buffer ring,
//     re-armed as soon as its completion is handled, with POLL_FIRST when
//     the last receive emptied the socket;
//   - one send per connection per loop turn, carrying every reply the turn
//     produced, MSG_NOSIGNAL; replies made while it is in flight wait for
//     its completion;
//   - one io_uring_enter per turn that submits and waits for one
//     completion, as a raw system call after a turn that had completions
//     and through the runtime after one that had none.
//
// Its CPU per request on the same load is what the kernel charges an
// io_uring server of this design; what gocached's uring engine costs on
// top of it is the most its user-space work could save.
//
//	uringfloor -l 127.0.0.1 -p 11211
//
// It takes (and ignores) memcached's -U, -m, -c and -t so enginecmp can
// start it like the other targets. Not a cache: never use it for anything
// else.
package main

import (
	"github.com/gocached/gocached/bench/floor"
	"golang.org/x/sys/unix"
)

// main stops on SIGTERM by shutting the listener down: that ends the
// multishot accept, which holds the listening socket, so the port is free
// when the process has exited (after a plain exit the ring, and with it the
// socket, is torn down asynchronously, and the next target enginecmp
// started on the port found it still in use).
func main() {
	floor.Main("uringfloor", serve, func(lfd int) { _ = unix.Shutdown(lfd, unix.SHUT_RDWR) })
}
