package protocol

import "github.com/gocached/gocached/internal/store"

// Items held by replies not yet written.
//
// memcached's reply to a retrieval hit (get, gets, gat, gats, mg, and the
// binary gets) holds a reference to the item until the reply is written,
// at the next flush. An incr or decr meeting an item with such a
// reference cannot rewrite it in place (its refcount is above 2), so it
// links a new item: the new value is not padded to the old length with
// spaces, and the item gets a new CAS. Within one connection that depends
// only on where the flushes fall, so gocached follows it: heldItems notes
// the keys of the hits since the last flush, and an arithmetic command on
// one of them asks the store for a new item (store.ArithRequest.Held).
// Other connections' unwritten replies, a matter of timing, are not seen.

// heldMost bounds the keys noted between two flushes; past it the rest of
// a huge multiget is not noted (its values are rewritten in place).
const heldMost = 1024

type heldItems struct {
	hashes []store.KeyHash
}

// note records a hit on the key hashed to h.
func (hi *heldItems) note(h store.KeyHash) {
	if len(hi.hashes) < heldMost {
		hi.hashes = append(hi.hashes, h)
	}
}

// holds reports whether a reply not yet written holds the key hashed to h.
func (hi *heldItems) holds(h store.KeyHash) bool {
	for _, x := range hi.hashes {
		if x == h {
			return true
		}
	}
	return false
}

// release forgets the keys: their replies were written (a flush) or
// dropped.
func (hi *heldItems) release() { hi.hashes = hi.hashes[:0] }

// heldHit notes a retrieval's hit on key.
func (s *Session) heldHit(key []byte) { s.held.note(s.hashKey(key)) }

// heldBy reports whether an unwritten reply holds key.
func (s *Session) heldBy(key []byte) bool {
	return len(s.held.hashes) > 0 && s.held.holds(store.HashKey(key))
}
