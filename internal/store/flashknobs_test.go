package store

import (
	"sync"
	"testing"
)

// Live ext_item_size and ext_item_age decide the next flush: a size above
// every value keeps the items in RAM, memcached's values let them go.
func TestFlashKnobsChangeFlush(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	fillCold(t, s, clock, 50)
	if k, ok := s.FlashKnobs(); !ok || k.ItemSize != 512 || k.ItemAge != 10 || k.MaxSleep != 1000000 {
		t.Fatalf("start knobs %+v %v", k, ok)
	}
	s.SetFlashKnobs(func(k *FlashKnobs) { k.ItemSize = 1 << 20 })
	if n := s.flushToFlash(clampTime(clock.Now())); n != 0 {
		t.Fatalf("flushed %d items smaller than ext_item_size", n)
	}
	s.SetFlashKnobs(func(k *FlashKnobs) { k.ItemSize, k.ItemAge = 512, 1000 })
	if n := s.flushToFlash(clampTime(clock.Now())); n != 0 {
		t.Fatalf("flushed %d items younger than ext_item_age", n)
	}
	s.SetFlashKnobs(func(k *FlashKnobs) { k.ItemAge = 10 })
	if n := s.flushToFlash(clampTime(clock.Now())); n == 0 {
		t.Fatal("nothing flushed once the knobs allow it")
	}
	if fc := s.Flash(); fc.ItemSize != 512 || fc.ItemAge != 10 || fc.Engine != fx.e {
		t.Fatalf("Flash() reports %+v", fc)
	}
	if (&Store{}).SetFlashKnobs(func(*FlashKnobs) {}) {
		t.Fatal("a store without a flash tier took knobs")
	}
}

// Knob changes race with the flusher and reads; no change is lost.
func TestFlashKnobsConcurrent(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	fillCold(t, s, clock, 100)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				s.SetFlashKnobs(func(k *FlashKnobs) {
					k.RecacheRate++
					k.Policy.CompactUnder = uint64(w*1000 + i)
				})
			}
		})
	}
	wg.Go(func() { s.flushToFlash(clampTime(clock.Now())) })
	wg.Go(func() {
		for range 100 {
			s.compactOnce()
			_ = s.Flash()
		}
	})
	wg.Wait()
	if k, _ := s.FlashKnobs(); k.RecacheRate != 400 {
		t.Fatalf("recache_rate %d after 400 increments", k.RecacheRate)
	}
}
