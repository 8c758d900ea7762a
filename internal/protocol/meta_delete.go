package protocol

import "github.com/gocached/gocached/internal/store"

// Meta delete: `md <key> <flags>*`. With I the item is not removed but
// marked stale with a new CAS, so that readers see X and one of them wins
// the right to recache it (W). With x (memcached 1.6.27 on) the value is
// emptied instead of the item removed (meta_emptied.go).

func (s *Session) metaDelete(line []byte, n int) {
	if !s.metaPrologue(line, n, false) {
		return
	}
	// md, unlike mg and ma, checks the opaque before the lookup.
	if s.opaqueTooLong(line, n, 2) {
		s.out = append(s.out, rMetaOpaqueTooLong...)
		return
	}
	f := &s.meta.flags
	var res store.Result
	if f.removeVal {
		res = s.emptyItem()
	} else {
		res = s.deleteLogged(s.meta.key, store.DeleteRequest{
			CAS: f.cas, HasCAS: f.hasCAS, MissOnMismatch: true,
			Invalidate: f.invalidate, SetExptime: f.newTTL, Exptime: int64(f.ttl), NewCAS: f.newCAS,
		}, deletedByMeta)
	}
	var code string
	switch res {
	case store.Stored:
		if f.quiet {
			return
		}
		code = "HD"
	case store.Exists:
		code = "EX"
	case store.NotStored:
		code = "NS"
	default:
		code = "NF"
	}
	s.out = append(s.out, code...)
	s.out = s.appendOpaqueAndKey(s.out, line, n, 2, s.meta.key, f.keyBinary)
	s.out = append(s.out, crlf...)
}
