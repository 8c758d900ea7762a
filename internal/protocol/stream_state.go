package protocol

import "github.com/gocached/gocached/internal/store"

// streamState is what a connection handed from requests to a stream of the
// server's own is serving: a metadump (crawler.go) or, for good, a watch
// log stream (watch.go). Each holds shared state (the crawler, a log
// subscription), which endDump and stopWatch give back.
type streamState struct {
	dump *dumpState // a metadump in progress
	// dumpFn is the store's callback for the metadump, bound once so that
	// a dump step does not allocate.
	dumpFn func(it store.Item) bool
	watch  *watcher // set once the connection became a log stream
}

// bind sets the store callback to s's method.
func (t *streamState) bind(s *Session) { t.dumpFn = s.dumpItem }

// active reports whether the connection serves a stream now.
func (t *streamState) active() bool { return t.dump != nil || t.watch != nil }
