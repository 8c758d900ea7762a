package protocol

import "github.com/gocached/gocached/internal/store"

// md's x flag (memcached 1.6.27 on): the item found is replaced by an empty
// one (client flags from F, else 0; TTL from T, else none), which keeps the
// old CAS unless E names one; with I that empty item is then invalidated as
// md I does any item. Clients (Dalli 5) use it to leave a tombstone that
// readers see as a hit with no value.
//
// memcached does this under the item's lock. Here it is a compare-and-swap
// on the CAS just read, so a concurrent change is never overwritten: the
// swap is retried against what is there now, or, when the client gave its
// own CAS (C), answered EX.

// emptyTries bounds the retries when other clients keep changing the item.
const emptyTries = 8

func (s *Session) emptyItem() store.Result {
	f := &s.meta.flags
	key := s.meta.key
	for try := 0; try < emptyTries; try++ {
		var cur uint64
		if !s.env.Store.View(key, func(it store.Item) { cur = it.CAS() }) {
			s.env.Store.CountDeleteMiss(key) // as memcached's md counts a miss
			return store.NotFound
		}
		if f.hasCAS && cur != f.cas {
			s.env.Store.CountDeleteMiss(key)
			return store.Exists
		}
		keep := f.newCAS
		if !keep.Set {
			keep = store.NewCAS{Value: cur, Set: true, Kept: true}
		}
		req := store.SetRequest{
			Mode: store.ModeCAS, Key: key, Flags: f.flags, Value: nil, CAS: cur,
			KeyBinary: f.keyBinary, NewCAS: keep, Tombstone: true, TombstoneHit: !f.invalidate,
		}
		if f.newTTL {
			req.Exptime = int64(f.ttl)
		}
		if cur == 0 {
			req.Mode = store.ModeReplace // CAS disabled (-C): nothing to compare
		}
		res, cas := s.env.Store.SetItem(req)
		switch res {
		case store.Stored:
		case store.Exists, store.NotFound, store.NotStored:
			continue // changed or gone since it was read: look again
		default:
			return store.NotStored
		}
		if !f.invalidate {
			if s.env.watching()&logDeletions != 0 {
				s.logDeletion(key, deletedByMeta, 0)
			}
			return store.Stored
		}
		return s.env.Store.DeleteItem(key, store.DeleteRequest{
			CAS: cas, HasCAS: cur != 0, MissOnMismatch: true,
			Invalidate: true, SetExptime: f.newTTL, Exptime: int64(f.ttl), NewCAS: f.newCAS,
		})
	}
	return store.NotStored
}
