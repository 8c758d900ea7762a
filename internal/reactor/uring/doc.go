// Package uring is gocached's io_uring engine (--engine uring): reactors,
// each a goroutine locked to an OS thread that is the single issuer of one
// io_uring instance, with one SO_REUSEPORT listener of every bound address
// and the connections of one NAPI ID (the acceptor hands a connection to
// the reactor that serves its NAPI, as the epoll engine does).
//
// Per reactor: a multishot accept per listener; a single-shot receive per
// connection that picks its buffer from the reactor's provided-buffer ring
// (IORING_REGISTER_PBUF_RING), so receive memory is per reactor, not per
// idle connection, and a receive reads no further ahead than the epoll
// engine's read per event (armRecv says why not multishot); replies
// queued as one send per connection and loop iteration; one io_uring_enter
// per iteration that both submits every send and re-armed receive and
// waits; completions reaped in batches. The ring is set up with SINGLE_ISSUER and DEFER_TASKRUN (see ringFlags). With busy-poll
// settings (reactor.EpollConfig's BusyPollUsecs/PreferBusyPoll, shared with
// the epoll engine so --poll-mode presets apply here too) the ring registers
// NAPI busy polling (IORING_REGISTER_NAPI, 6.9+) with static tracking of its
// reactor's NAPI ID (6.13+; dynamic tracking before). At depth 1 this turns
// the epoll engine's three system calls per request (epoll_wait, read,
// write) into a share of one io_uring_enter per batch; the TCP work inside
// those calls stays, and on loopback it is most of a request's cost. -t 0
// (auto) is the epoll engine's choice, reactor.AutoReactors: one reactor
// per NAPI of the listen interface, GOMAXPROCS where it has none.
//
// Flow control is the shared policy of package reactor: a connection whose
// unsent replies exceed reactor.MaxUnsent has its receive cancelled (what
// arrives before the cancel lands is buffered, never dropped) and re-armed
// once it drains; one that yielded under -R with requests buffered is not
// re-armed until they are processed. The connection and loop bookkeeping
// (slot table, handoffs, yields, drain, idle sweep, counters, `stats
// conns`, the session turn) is the shared core, package rawloop, as for the
// epoll engine; this package is the ring behind it. Accounting and the
// Session glue come from package reactor.
//
// The system-call layer is package uringsys (io_uring_setup/enter/register,
// the mmapped SQ and CQ with atomic heads and tails, the buffer ring), a
// package of its own so that bench/cmd/uringfloor drives the kernel through
// the same ring code; NAPI registration (napi_linux.go) is built on it here.
//
// Where io_uring is unavailable (kernel.io_uring_disabled, a seccomp
// filter, a kernel before 6.1) New returns one line that says so; Available
// runs the same check for `doctor`.
package uring
