package protocol

import "github.com/gocached/gocached/internal/store"

// Meta delete: `md <key> <flags>*`. With I the item is not removed but
// marked stale with a new CAS, so that readers see X and one of them wins
// the right to recache it (W).

func (s *Session) metaDelete(line []byte, n int) {
	if !s.metaPrologue(line, n, rMetaFlagsTooLong, rMetaInvalidOrDup) {
		return
	}
	// md, unlike mg and ma, checks the opaque before the lookup.
	if s.opaqueTooLong(line, n, 2) {
		s.out = append(s.out, rMetaOpaqueTooLong...)
		return
	}
	f := &s.meta.flags
	res := s.env.Store.DeleteItem(s.meta.key, store.DeleteRequest{
		CAS: f.cas, HasCAS: f.hasCAS, MissOnMismatch: true,
		Invalidate: f.invalidate, SetExptime: f.newTTL, Exptime: int64(f.ttl), NewCAS: f.newCAS,
	})
	var code string
	switch res {
	case store.Stored:
		if f.quiet {
			return
		}
		code = "HD"
	case store.Exists:
		code = "EX"
	default:
		code = "NF"
	}
	s.out = append(s.out, code...)
	s.out = s.appendOpaqueAndKey(s.out, line, n, 2, s.meta.key, f.keyBinary)
	s.out = append(s.out, crlf...)
}
