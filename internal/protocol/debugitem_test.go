package protocol

import (
	"strings"
	"testing"
)

// TestSlabsAutomoveWindow checks `slabs automove window|freeratio` and the
// prefix matching of the subcommand against memcached 1.6.45's replies and
// the `stats settings` lines they change.
func TestSlabsAutomoveWindow(t *testing.T) {
	for _, c := range []struct{ name, in, want, settings string }{
		{"bounds", "slabs automove window 0\r\nslabs automove window 2\r\nslabs automove window 1801\r\nslabs automove window 67108864\r\n",
			lines("CLIENT_ERROR automove window too low or too high", "CLIENT_ERROR automove window too low or too high",
				"CLIENT_ERROR automove window too low or too high", "CLIENT_ERROR automove window too low or too high"),
			"STAT slab_automove_window 30\r\n"},
		{"low", "slabs automove window 3\r\n", lines("OK"), "STAT slab_automove_window 3\r\n"},
		{"high", "slabs automove window 1800\r\n", lines("OK"), "STAT slab_automove_window 1800\r\n"},
		{"prefix", "slabs automove w 5\r\n", lines("OK"), "STAT slab_automove_window 5\r\n"},
		{"bad", "slabs automove window\r\nslabs automove window abc\r\nslabs automove window -1\r\nslabs automove window 4294967299\r\n",
			lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format",
				"CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"),
			"STAT slab_automove_window 30\r\n"},
		{"noreply", "slabs automove window 7 noreply\r\nslabs automove window 1801 noreply\r\nversion\r\n", "VERSION 1.6.18\r\n",
			"STAT slab_automove_window 7\r\n"},
		{"freeratio", "slabs automove freeratio 0.5\r\nslabs automove fr x\r\n", lines("OK", "ERROR"),
			"STAT slab_automove_freeratio 0.500\r\n"},
		{"ratio prefix", "slabs automove r 0.5\r\n", lines("OK"), "STAT slab_automove_ratio 0.50\r\n"},
		{"level", "slabs automove 3\r\nslabs automove x\r\nslabs automove\r\nslabs automove 4294967296\r\nslabs automove +1\r\n",
			lines("ERROR", "CLIENT_ERROR bad command line format", "ERROR", "CLIENT_ERROR bad command line format",
				"CLIENT_ERROR bad command line format"), "STAT slab_automove 1\r\n"},
		{"window digits", "slabs automove window 5x\r\nslabs automove window +5\r\nslabs automove window 05\r\n",
			lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "OK"), "STAT slab_automove_window 5\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newSmallEnv(t)
			if got := drive(t, NewSession(env), []byte(c.in)); got.out != c.want {
				t.Errorf("got %q, want %q", got.out, c.want)
			}
			set := drive(t, NewSession(env), []byte("stats settings\r\n")).out
			if !strings.Contains(set, c.settings) {
				t.Errorf("stats settings lacks %q", c.settings)
			}
		})
	}
}

// TestDebugItem checks memcached-debug's `debugitem` replies (from
// memcached 1.6.45) and that what it holds is released: by unref, or
// when the connection goes.
func TestDebugItem(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		pins, locks    int // held after the script, before the reset
	}{
		{"errors", "debugitem\r\ndebugitem lock\r\ndebugitem zzz foo\r\n", lines("ERROR", "ERROR", "ERROR"), 0, 0},
		{"miss", "debugitem ref foo\r\ndebugitem unref foo\r\n", lines("MISS", "MISS"), 0, 0},
		{"lock", "debugitem lock foo\r\ndebugitem lo bar\r\ndebugitem unl foo\r\n", lines("OK", "OK", "OK"), 0, 1},
		{"unlock unheld", "debugitem unlock foo\r\n", lines("OK"), 0, 0},
		{"ref", "set foo 0 0 1\r\na\r\ndebugitem ref foo\r\ndebugitem r foo\r\n", lines("STORED", "OK", "OK"), 1, 0},
		{"unref reffed", "set foo 0 0 1\r\na\r\ndebugitem ref foo\r\ndebugitem unref reffed\r\ndebugitem u reffed\r\n",
			lines("STORED", "OK", "OK", "OK"), 0, 0},
		{"unref key", "set foo 0 0 1\r\na\r\ndebugitem ref foo\r\ndebugitem unref foo\r\n", lines("STORED", "OK", "OK"), 0, 0},
		{"ref deleted", "set foo 0 0 1\r\na\r\ndebugitem ref foo\r\ndelete foo\r\nget foo\r\n",
			lines("STORED", "OK", "DELETED", "END"), 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newSmallEnv(t)
			env.Settings.DebugTime = true
			s := NewSession(env)
			if got := drive(t, s, []byte(c.in)); got.out != c.want {
				t.Errorf("got %q, want %q", got.out, c.want)
			}
			if p := env.Store.Pins(); p != c.pins {
				t.Errorf("%d chunks pinned, want %d", p, c.pins)
			}
			if l := len(s.debug.locks); l != c.locks {
				t.Errorf("%d locks held, want %d", l, c.locks)
			}
			s.Reset()
			if p := env.Store.Pins(); p != 0 || len(s.debug.locks) != 0 {
				t.Errorf("after the connection closed: %d pinned, locks %q", p, s.debug.locks)
			}
		})
	}
	env := newSmallEnv(t)
	if got := drive(t, NewSession(env), []byte("debugitem lock foo\r\n")); got.out != "ERROR\r\n" {
		t.Errorf("without --debug-time: %q", got.out)
	}
}

// TestMoverStatsLines checks the page mover's lines in `stats`, in
// memcached 1.6.45's order, before any move.
func TestMoverStatsLines(t *testing.T) {
	out := drive(t, NewSession(newSmallEnv(t)), []byte("stats\r\n")).out
	want := "STAT slab_reassign_rescues 0\r\nSTAT slab_reassign_chunk_rescues 0\r\nSTAT slab_reassign_inline_reclaim 0\r\n" +
		"STAT slab_reassign_busy_items 0\r\nSTAT slab_reassign_busy_deletes 0\r\nSTAT slab_reassign_busy_nomem 0\r\n" +
		"STAT slab_reassign_last_busy_status none\r\nSTAT slab_reassign_running 0\r\nSTAT slabs_moved 0\r\n"
	if !strings.Contains(out, want) {
		t.Errorf("stats lacks\n%s", want)
	}
}
