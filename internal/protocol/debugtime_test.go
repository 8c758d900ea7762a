package protocol

import (
	"testing"

	"github.com/gocached/gocached/internal/store"
)

// TestDebugTime drives `debugtime` with --debug-time on over a store that
// keeps its own clock, as the server's does.
func TestDebugTime(t *testing.T) {
	env := newSmallEnv(t)
	st, err := store.New(store.Config{MemoryLimit: 4 << 20, MaxItemSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	env.Store = st
	env.Settings.DebugTime = true
	for _, c := range []struct{ name, in, want string }{
		{"bad", "debugtime\r\ndebugtime x\r\ndebugtime 1x\r\ndebugtime 99999999999999999999\r\n",
			"ERROR\r\nERROR\r\nERROR\r\nERROR\r\n"},
		{"expires", "set k 0 2 1\r\nv\r\ndebugtime p\r\ndebugtime 3\r\nget k\r\ndebugtime r\r\n",
			"STORED\r\nOK\r\nOK\r\nEND\r\nOK\r\n"},
		{"back", "debugtime -3\r\nset k 0 100 1\r\nv\r\ndebugtime 101\r\nget k\r\n",
			"OK\r\nSTORED\r\nOK\r\nEND\r\n"},
	} {
		if got := drive(t, NewSession(env), []byte(c.in)); got.out != c.want || got.closed {
			t.Errorf("%s: got %q (closed %v), want %q", c.name, got.out, got.closed, c.want)
		}
	}
}
