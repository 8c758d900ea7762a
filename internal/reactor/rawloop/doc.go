// Package rawloop is the loop core the raw-descriptor engines (epoll,
// uring) share: the connection type and its slot table, handoffs and
// wakeups from the mailbox, yields, drain, the idle sweep, the counters
// and `stats conns` lines, the accept-and-route tail, and the session turn
// that runs a connection's buffered requests. An engine keeps only its own
// I/O (readiness and read/write, or submissions and completions) and plugs
// it in through IO; the engines import this package, never the reverse.
package rawloop
