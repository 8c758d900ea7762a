package protocol

import "github.com/gocached/gocached/internal/store"

// debugItem is memcached-debug's `debugitem lock|unlock|ref|unref KEY`,
// which its t/slabs-mover.t uses to hold the page mover up. The
// subcommand matches as a prefix, as memcached's strncmp does. `ref` pins
// the item (MISS when absent) until `unref reffed` releases the latest
// one; `unref KEY` releases one this connection holds on KEY's item.
// Locks and refs the connection still holds go when it closes (memcached
// leaks them; here they would keep a page move waiting for ever). The
// Session only dispatches here under Settings.DebugTime.
func (s *Session) debugItem(line []byte, n int) {
	if n < 3 {
		s.reply(rError)
		return
	}
	sub, key := s.text.token(line, 1), s.text.token(line, 2)
	d := &s.debug
	switch {
	case prefixOf(sub, "lock"):
		s.env.Store.DebugLock(key)
		d.locks = append(d.locks, string(key))
	case prefixOf(sub, "unlock"):
		s.env.Store.DebugUnlock(key)
		d.dropLock(string(key))
	case prefixOf(sub, "ref"):
		ref, ok := s.env.Store.DebugRef(key)
		if !ok {
			s.reply("MISS\r\n")
			return
		}
		d.refs = append(d.refs, heldRef{key: string(key), ref: ref})
	case prefixOf(sub, "unref"):
		if string(key) == "reffed" {
			if k := len(d.refs); k > 0 {
				s.env.Store.ReleaseRef(d.refs[k-1].ref)
				d.refs = d.refs[:k-1]
			}
			break
		}
		ref, ok := s.env.Store.DebugRef(key) // (memcached looks the key up first too)
		if !ok {
			s.reply("MISS\r\n")
			return
		}
		s.env.Store.ReleaseRef(ref)
		for i := len(d.refs) - 1; i >= 0; i-- {
			if d.refs[i].key == string(key) {
				s.env.Store.ReleaseRef(d.refs[i].ref)
				d.refs = append(d.refs[:i], d.refs[i+1:]...)
				break
			}
		}
	default:
		s.reply(rError)
		return
	}
	s.reply(rOK)
}

// debugState is what `debugitem` left held by the connection.
type debugState struct {
	locks []string
	refs  []heldRef
}

type heldRef struct {
	key string
	ref store.ValueRef
}

// dropLock forgets one lock held on key.
func (d *debugState) dropLock(key string) {
	for i, k := range d.locks {
		if k == key {
			d.locks = append(d.locks[:i], d.locks[i+1:]...)
			return
		}
	}
}

// endDebug releases what `debugitem` left held, when the connection goes.
func (s *Session) endDebug() {
	d := &s.debug
	if len(d.locks)+len(d.refs) == 0 {
		return
	}
	for _, k := range d.locks {
		s.env.Store.DebugUnlock([]byte(k))
	}
	for _, h := range d.refs {
		s.env.Store.ReleaseRef(h.ref)
	}
	*d = debugState{}
}
