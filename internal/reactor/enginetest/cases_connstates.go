package enginetest

import (
	"testing"

	"github.com/gocached/gocached/internal/reactor"
)

// statsConnsStates checks the `stats conns` states memcached 1.6.45 shows
// for a `watch` stream (conn_watch) and for binary requests partway in: the
// rest of the header, or of the extras and key, is waited for in conn_read,
// as memcached reads them with the header; only a value is conn_nread.
func statsConnsStates(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{})
	watcher := s.Dial(t)
	watcher.Send("watch\r\n")
	watcher.Expect("OK\r\n")
	// A binary set: 24-byte header, 8 bytes of extras, key "k", value "v".
	header := "\x80\x01\x00\x01\x08\x00\x00\x00\x00\x00\x00\x0a" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	partHeader := s.Dial(t)
	partHeader.Send(header[:12])
	partKey := s.Dial(t)
	partKey.Send(header)
	partValue := s.Dial(t)
	partValue.Send(header + "\x00\x00\x00\x00\x00\x00\x00\x00" + "k")
	asking := s.Dial(t)
	want := map[*Client]string{watcher: "conn_watch", partHeader: "conn_read", partKey: "conn_read", partValue: "conn_nread"}
	var lines map[string]string
	// Nothing answers the partial requests, so nothing says when the
	// server has read them: ask until every state shows.
	WaitFor(t, "stats conns to show every client's state", func() bool {
		lines = asking.Stats("conns")
		for c, state := range want {
			if connState(lines, c) != state {
				return false
			}
		}
		return true
	})
}
