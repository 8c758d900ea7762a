package store

import (
	"bytes"
	"testing"
)

// An Item never reads flash while its shard is locked: for a flash item
// Value, ValueHead and AppendValue read nothing (get_extstore stays) and
// give no value. The value comes from the FlashRead the Item fills, which
// its caller starts once the callback has returned and the lock is free.
func TestItemReadsNoFlashUnderLock(t *testing.T) {
	fx := openFlash(t)
	s := newFlashStore(t, fx, newFakeClock())
	want := flashValue(3)
	putOnFlash(t, s, "k", 0, want)
	var fr FlashRead
	var value, head, appended []byte
	var flash bool
	if !s.View([]byte("k"), func(it Item) {
		flash = it.Flash()
		value, head, appended = it.Value(), it.ValueHead(), it.AppendValue(nil)
		it.FlashRead(&fr)
	}) {
		t.Fatal("k missing")
	}
	if !flash || value != nil || head != nil || appended != nil {
		t.Fatalf("flash %v; under the lock Value %d bytes, ValueHead %d, AppendValue %d: want a flash item and none",
			flash, len(value), len(head), len(appended))
	}
	if n := s.FlashStats().GetExtstore; n != 0 {
		t.Fatalf("get_extstore %d after the callback, want 0: a read under the shard lock", n)
	}
	done := make(chan struct{})
	if !fr.Start(func(*FlashRead) { close(done) }) {
		t.Fatal("read refused")
	}
	wait(t, done)
	if v, ok := fr.Finish(); !ok || !bytes.Equal(v, want) {
		t.Fatalf("read after the callback: hit %v, %d bytes, want %d", ok, len(v), len(want))
	}
	if n := s.FlashStats().GetExtstore; n != 1 {
		t.Fatalf("get_extstore %d, want the one read", n)
	}
	checkInvariants(t, s)
}
