package flash

import (
	"net"
	"testing"
)

func TestStatsIntAndDelta(t *testing.T) {
	before := Stats{"cmd_get": "10", "get_hits": "7", "version": "1.6.45"}
	after := Stats{"cmd_get": "25", "get_hits": "19", "get_extstore": "4", "version": "1.6.45"}
	if n, ok := after.Int("cmd_get"); !ok || n != 25 {
		t.Errorf("Int(cmd_get) = %d, %v", n, ok)
	}
	if _, ok := after.Int("version"); ok {
		t.Error("a non-number read as a counter")
	}
	if _, ok := after.Int("absent"); ok {
		t.Error("an absent counter read as present")
	}
	if d := Delta(before, after, "cmd_get"); d != 15 {
		t.Errorf("Delta(cmd_get) = %d, want 15", d)
	}
	// A counter only one side has is no delta, not the whole value.
	if d := Delta(before, after, "get_extstore"); d != 0 {
		t.Errorf("Delta(get_extstore) = %d, want 0", d)
	}
}

func TestReadStatsFromServer(t *testing.T) {
	s := newFakeServer(t)
	s.written = 42
	st, err := readStats(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := st.Int(statObjectsWritten); !ok || n != 42 {
		t.Errorf("%s = %d, %v; want 42", statObjectsWritten, n, ok)
	}
	s.mu.Lock()
	s.noExt = true
	s.mu.Unlock()
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err = readStatsOn(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Int(statObjectsWritten); ok {
		t.Error("a server without a flash tier reported extstore counters")
	}
}
