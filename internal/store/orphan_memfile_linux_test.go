//go:build linux

package store

import (
	"bytes"
	"strings"
	"testing"
)

// A chunk still pinned when its item was replaced (an orphan: a reader was
// sending the old value in pieces) keeps its record's header as it was,
// not marked dead: a SaveState taken then writes it as a live item, and the
// restart links it again beside the new value ("stored twice": the whole
// cache starts empty) or brings a deleted item back.
func TestMemoryFileOrphanNotRestored(t *testing.T) {
	for _, replace := range []bool{true, false} {
		cfg := memfileConfig(t)
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		old := bytes.Repeat([]byte{'o'}, 40<<10)
		set(s, "k", string(old))
		set(s, "other", "x")
		var ref ValueRef
		s.Get([]byte("k"), func(v []byte, _ Meta) { ref = s.RefOf([]byte("k"), v) })
		if replace {
			set(s, "k", "new")
		} else {
			s.Delete([]byte("k"))
		}
		if err := s.SaveState(); err != nil { // the pin is still out
			t.Fatal(err)
		}
		_ = ref // the process ends with the pin out
		s.Close()
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		v, _, ok := get(r, "k")
		_, _, otherOK := get(r, "other")
		switch {
		case !otherOK:
			t.Errorf("replace %v: restart lost everything: %s", replace, r.RestoreReport())
		case replace && v != "new":
			t.Errorf("replace %v: k = %d bytes %q..., want new", replace, len(v), v[:min(len(v), 8)])
		case !replace && ok:
			t.Errorf("deleted k is back after the restart (%d bytes)", len(v))
		}
		if rep := r.RestoreReport(); !strings.Contains(rep, "restored") {
			t.Logf("report: %s", rep)
		}
		r.Close()
	}
}
