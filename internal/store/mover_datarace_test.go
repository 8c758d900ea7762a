package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Under -race: the mover reads the state bits (and then the key) of every
// chunk of the page it walks holding only the class lock, while a store
// writes the header and key of a chunk it was just handed holding only its
// shard's lock (Reserve, setLocked, create: takeChunk's class lock is
// released before the record is written).
func TestMoverReadsChunksBeingWritten(t *testing.T) {
	heapArena = true // (a mapped arena is outside the race detector's sight)
	defer func() { heapArena = false }()
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 1 << 20})
	v := make([]byte, 3000)
	for i := range 3000 {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, v, 0)
	}
	class := s.ItemClass(5, len(v), 0)
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				k := fmt.Appendf(nil, "r%d-%d", g, i%500)
				rv := s.Reserve(k, len(v))
				s.ReleaseReserved(&rv)
				s.Set(ModeSet, fmt.Appendf(nil, "k%d", (i*7+g)%3000), 0, 0, v, 0)
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(stop) {
			if s.Reassign(class, 0) == ReassignOK {
				<-s.mover.done
			}
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	t.Logf("mover %+v", s.MoverStats())
}
