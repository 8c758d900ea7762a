package store

// memcached's hash table starts at 2^hashpower buckets (-o hashpower, 16 by
// default) and doubles, one power at a time, once it holds more than 1.5
// items per bucket, up to 2^32; a restart from a memory file keeps the
// power it had reached. gocached's index is per shard and grows on its own,
// so there is no table to double here: the store keeps the level memcached
// would be at, by the same rule, for `stats` (hash_power_level), which
// tools and memcached's restart.t read as a measure of the item count the
// cache has held.

const (
	defaultHashPower = 16 // memcached's HASHPOWER_DEFAULT
	maxHashPower     = 32 // memcached's HASHPOWER_MAX
)

// initHashPower sets the starting level from the configuration.
func (s *Store) initHashPower() {
	hp := s.cfg.HashPower
	if hp <= 0 {
		hp = defaultHashPower
	}
	s.hashPower.Store(uint32(min(hp, maxHashPower)))
}

// hashExpand raises the level while the items outnumber 1.5 per bucket,
// as memcached's expansion does (it checks on every link and expands in a
// background thread; this runs with the background reclaimer).
func (s *Store) hashExpand() {
	if s.cfg.NoHashExpand {
		return
	}
	var items uint64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		items += uint64(sh.idx.count)
		sh.mu.Unlock()
	}
	for hp := s.hashPower.Load(); hp < maxHashPower && items > (uint64(1)<<hp)*3/2; hp++ {
		s.hashPower.Store(hp + 1)
	}
}
