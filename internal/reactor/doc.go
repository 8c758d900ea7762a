// Package reactor is gocached's shared connection core. The engines that do
// the I/O live in sub-packages and are built from it:
//
//   - epoll: Linux reactors, each a goroutine locked to an OS thread that
//     owns one epoll context (with busy-poll parameters), listeners in
//     SO_REUSEPORT groups steered by RX queue, and connections routed to
//     the reactor serving their NAPI ID.
//   - uring: the same reactors over io_uring: one ring per reactor, a
//     multishot accept per listener, receives from a provided-buffer ring,
//     one send per connection and loop iteration, NAPI busy polling
//     registered on the ring.
//   - portable: a goroutine per connection over the net package; it runs
//     wherever Go does and is the baseline the reactors are measured
//     against.
//
// What every engine must do alike is written once, here: the Engine
// interface and its Config (built once by internal/server, never written by an
// engine), -l parsing and the sockets a listen list binds (Bindings),
// memcached's connection accounting (Accounting) and `stats conns`
// rendering (WriteConns), the flow-control policy (flow.go), and the
// Session glue (RunSession, RejectMessage, RejectFD/RejectConn), UDP
// (UDPServer), and on Linux what the raw-descriptor engines (epoll, uring)
// share: the rule that picks a connection's reactor (Router: the unix
// socket's round-robin, UnixSpreader, and NAPIRouter), NAPI discovery
// (IncomingNAPIID, AutoReactors), the handoff Mailbox, and listening
// sockets (OpenListener, SockaddrString). Their loop core (connections and
// the slot table, handoffs, yields, drain, idle sweep, counters, the
// accept-and-route tail and the session turn, each engine's I/O behind one
// interface) is the sub-package rawloop. Protocol parsing is not here: a
// connection hands its bytes to a Session (internal/protocol) and gets
// reply bytes back.
//
// Dependencies flow one way: cmd/gocached -> internal/server -> reactor/<engine> ->
// reactor/rawloop (epoll, uring) -> reactor -> protocol -> store. The
// engine conformance suite (conformance_test.go) runs one table of
// protocol, accounting, flow-control and shutdown cases against every
// engine; a new engine joins it with one line.
package reactor
