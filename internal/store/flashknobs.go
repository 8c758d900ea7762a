package store

import (
	"sync"
	"sync/atomic"

	"github.com/gocached/gocached/internal/extstore"
)

// FlashKnobs are the ext_* settings memcached's `extstore` command changes
// while the server runs.
type FlashKnobs struct {
	ItemSize    uint32          // ext_item_size
	ItemAge     uint32          // ext_item_age, seconds
	LowTTL      uint32          // ext_low_ttl, seconds
	RecacheRate uint32          // ext_recache_rate
	MaxSleep    uint32          // ext_max_sleep, microseconds
	Policy      extstore.Policy // ext_compact_under, ext_drop_under, ext_max_frag, ext_drop_unread
}

// DefaultFlashKnobs are memcached 1.6.45's values without options (its
// compact_under and drop_under are 0 until ext_path sets them).
func DefaultFlashKnobs() FlashKnobs {
	return FlashKnobs{ItemSize: 512, ItemAge: 1<<32 - 1, RecacheRate: 2000, MaxSleep: 1000000,
		Policy: extstore.Policy{MaxFrag: 0.8}}
}

// flashKnobs is the live copy: readers load a snapshot without a lock,
// writers replace it under mu (so two changes never lose one another).
type flashKnobs struct {
	mu  sync.Mutex
	cur atomic.Pointer[liveKnobs]
}

// liveKnobs is one snapshot with what the store derives from it.
type liveKnobs struct {
	FlashKnobs
	minClass int // the first class whose items may go (memcached's slabs_clsid(ext_item_size))
}

func (k *flashKnobs) load() *liveKnobs { return k.cur.Load() }

// knobsOf turns FlashConfig's fields into knobs.
func knobsOf(c *FlashConfig) FlashKnobs {
	k := FlashKnobs{ItemSize: uint32(c.ItemSize), ItemAge: c.ItemAge, LowTTL: c.LowTTL,
		RecacheRate: c.RecacheRate, Policy: c.Policy}
	if c.ItemSize <= 0 {
		k.ItemSize = 512
	}
	k.MaxSleep = uint32(min(c.MaxSleep.Microseconds(), 1<<32-1))
	if c.MaxSleep <= 0 {
		k.MaxSleep = 1000000
	}
	return k
}

// setKnobs installs k, deriving the flush's first class.
func (s *Store) setKnobs(k FlashKnobs) {
	lk := &liveKnobs{FlashKnobs: k, minClass: max(1, s.classes.classOf(int((uint64(k.ItemSize)+7)&^7)))}
	s.flash.knobs.cur.Store(lk)
	s.setReserve(lk.minClass)
}

// FlashKnobs returns the live ext_* settings; false without a flash tier.
func (s *Store) FlashKnobs() (FlashKnobs, bool) {
	if s.flash == nil {
		return FlashKnobs{}, false
	}
	return s.flash.knobs.load().FlashKnobs, true
}

// SetFlashKnobs changes the live ext_* settings through fn (memcached's
// `extstore` command); it reports false without a flash tier. The flusher,
// the compactor and reads see the change from their next item on.
func (s *Store) SetFlashKnobs(fn func(k *FlashKnobs)) bool {
	f := s.flash
	if f == nil {
		return false
	}
	f.knobs.mu.Lock()
	defer f.knobs.mu.Unlock()
	k := f.knobs.load().FlashKnobs
	fn(&k)
	s.setKnobs(k)
	// A new threshold may make a page a candidate now: the compactor
	// looks at once rather than after the next client write.
	s.kickCompactor()
	return true
}
