//go:build !logstore

package store

// PLACEHOLDER implementation: a map behind one mutex, correct in semantics but not
// GC-free and without memory accounting. It exists so that the protocol, the engines
// and the integration tests can be built while the real page-based store is written;
// the real store replaces this file and keeps the method set below.

import (
	"errors"
	"strconv"
	"sync"
	"time"
)

const relativeExpiryLimit = 60 * 60 * 24 * 30 // memcached's REALTIME_MAXDELTA

type entry struct {
	value  []byte
	meta   Meta
	stored int64
}

// Store is the cache.
type Store struct {
	cfg     Config
	mu      sync.Mutex
	items   map[string]*entry
	cas     uint64
	flushAt int64 // items stored at or before this time are invalid (0 = none)
	st      Stats
}

// New returns an empty store.
func New(cfg Config) (*Store, error) {
	if cfg.MemoryLimit <= 0 {
		return nil, errors.New("store: memory limit must be positive")
	}
	if cfg.MaxItemSize <= 0 {
		cfg.MaxItemSize = 1 << 20
	}
	if cfg.Now == nil {
		cfg.Now = func() int64 { return time.Now().Unix() }
	}
	return &Store{cfg: cfg, items: make(map[string]*entry)}, nil
}

// Close stops background work.
func (s *Store) Close() {}

// Now returns the store's current time in unix seconds.
func (s *Store) Now() int64 { return s.cfg.Now() }

// MaxItemSize reports the largest value length Set accepts for a key of keyLen bytes.
func (s *Store) MaxValueSize(keyLen int) int { return s.cfg.MaxItemSize - keyLen - 48 }

func (s *Store) absExptime(exptime, now int64) int64 {
	switch {
	case exptime == 0:
		return 0
	case exptime < 0:
		return now - 1
	case exptime <= relativeExpiryLimit:
		return now + exptime
	default:
		return exptime
	}
}

// live returns the entry for key if present and valid, unlinking it if it has expired.
func (s *Store) live(key []byte, now int64) (*entry, bool) {
	e, ok := s.items[string(key)]
	if !ok {
		return nil, false
	}
	if s.flushAt != 0 && e.stored <= s.flushAt && s.flushAt <= now {
		delete(s.items, string(key))
		s.st.CurrItems--
		return nil, false
	}
	if e.meta.Exptime != 0 && e.meta.Exptime <= now {
		delete(s.items, string(key))
		s.st.CurrItems--
		return nil, false
	}
	return e, true
}

func (s *Store) nextCAS() uint64 {
	if s.cfg.DisableCAS {
		return 0
	}
	s.cas++
	return s.cas
}

// Set stores value under key according to mode. cas is compared only in ModeCAS.
func (s *Store) Set(mode Mode, key []byte, flags uint32, exptime int64, value []byte, cas uint64) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.CmdSet++
	if len(key)+len(value)+48 > s.cfg.MaxItemSize {
		return TooLarge
	}
	now := s.cfg.Now()
	e, ok := s.live(key, now)
	switch mode {
	case ModeAdd:
		if ok {
			return NotStored
		}
	case ModeReplace, ModeAppend, ModePrepend:
		if !ok {
			return NotStored
		}
	case ModeCAS:
		if !ok {
			s.st.CasMisses++
			return NotFound
		}
		if e.meta.CAS != cas {
			s.st.CasBadval++
			return Exists
		}
		s.st.CasHits++
	}
	v := append([]byte(nil), value...)
	m := Meta{Flags: flags, Exptime: s.absExptime(exptime, now)}
	if mode == ModeAppend || mode == ModePrepend {
		if len(key)+len(e.value)+len(value)+48 > s.cfg.MaxItemSize {
			return TooLarge
		}
		if mode == ModeAppend {
			v = append(append([]byte(nil), e.value...), value...)
		} else {
			v = append(v, e.value...)
		}
		m.Flags, m.Exptime = e.meta.Flags, e.meta.Exptime
	}
	m.CAS = s.nextCAS()
	if !ok {
		s.st.CurrItems++
	}
	s.st.TotalItems++
	s.items[string(key)] = &entry{value: v, meta: m, stored: now}
	return Stored
}

// Get calls fn with the value of key if it is present; value is valid only during fn.
func (s *Store) Get(key []byte, fn func(value []byte, m Meta)) bool {
	return s.get(key, false, 0, fn)
}

// GetAndTouch is Get that also sets a new exptime (gat/gats).
func (s *Store) GetAndTouch(key []byte, exptime int64, fn func(value []byte, m Meta)) bool {
	return s.get(key, true, exptime, fn)
}

func (s *Store) get(key []byte, touch bool, exptime int64, fn func(value []byte, m Meta)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	if touch {
		s.st.CmdTouch++
	} else {
		s.st.CmdGet++
	}
	e, ok := s.live(key, now)
	if !ok {
		if touch {
			s.st.TouchMisses++
		} else {
			s.st.GetMisses++
		}
		return false
	}
	if touch {
		s.st.TouchHits++
		e.meta.Exptime = s.absExptime(exptime, now)
	} else {
		s.st.GetHits++
	}
	fn(e.value, e.meta)
	return true
}

// Touch sets a new exptime on key.
func (s *Store) Touch(key []byte, exptime int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	s.st.CmdTouch++
	e, ok := s.live(key, now)
	if !ok {
		s.st.TouchMisses++
		return false
	}
	s.st.TouchHits++
	e.meta.Exptime = s.absExptime(exptime, now)
	return true
}

// Delete removes key.
func (s *Store) Delete(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live(key, s.cfg.Now()); !ok {
		s.st.DeleteMisses++
		return false
	}
	delete(s.items, string(key))
	s.st.CurrItems--
	s.st.DeleteHits++
	return true
}

// IncrDecr adds (or, with decr, subtracts) delta from the decimal value of key.
// incr wraps at 2^64; decr stops at 0. It returns the new value.
func (s *Store) IncrDecr(key []byte, delta uint64, decr bool) (uint64, Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(key, s.cfg.Now())
	if !ok {
		if decr {
			s.st.DecrMisses++
		} else {
			s.st.IncrMisses++
		}
		return 0, NotFound
	}
	cur, err := strconv.ParseUint(string(trimRightSpace(e.value)), 10, 64)
	if err != nil {
		return 0, NonNumeric
	}
	if decr {
		s.st.DecrHits++
		if delta > cur {
			cur = 0
		} else {
			cur -= delta
		}
	} else {
		s.st.IncrHits++
		cur += delta
	}
	e.value = strconv.AppendUint(nil, cur, 10)
	e.meta.CAS = s.nextCAS()
	return cur, Stored
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// FlushAll invalidates every item stored before now+delay seconds.
func (s *Store) FlushAll(delay int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.CmdFlush++
	now := s.cfg.Now()
	if delay > 0 {
		s.flushAt = s.absExptime(delay, now)
	} else {
		s.flushAt = now
	}
}

// Stats returns a snapshot of the counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.LimitMaxbytes = uint64(s.cfg.MemoryLimit)
	return st
}

// ResetStats zeroes the counters that `stats reset` clears.
func (s *Store) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	curr := s.st.CurrItems
	s.st = Stats{CurrItems: curr}
}

// Classes returns per-class statistics for `stats slabs` and `stats items`.
func (s *Store) Classes() []ClassStats { return nil }
