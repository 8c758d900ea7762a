package protocol

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/gocached/gocached/internal/extstore"
	"github.com/gocached/gocached/internal/store"
)

// extKnobs holds the ext_* settings of a server without a flash tier:
// memcached 1.6.45 accepts `extstore` changes then too and prints them in
// `stats settings`. With a flash tier the store holds the live values.
type extKnobs struct {
	mu  sync.Mutex
	set bool
	k   store.FlashKnobs
}

// extSettings returns the ext_* settings `stats settings` prints.
func (e *Env) extSettings() store.FlashKnobs {
	if k, ok := e.Store.FlashKnobs(); ok {
		return k
	}
	x := &e.ext
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.set {
		return store.DefaultFlashKnobs()
	}
	return x.k
}

// updateExtSettings changes the ext_* settings through fn.
func (e *Env) updateExtSettings(fn func(k *store.FlashKnobs)) {
	if e.Store.SetFlashKnobs(fn) {
		return
	}
	x := &e.ext
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.set {
		x.k, x.set = store.DefaultFlashKnobs(), true
	}
	fn(&x.k)
}

// extWbufSize is ext_wbuf_size in bytes (memcached's default without a tier).
func (e *Env) extWbufSize() uint64 {
	if fc := e.Store.Flash(); fc != nil && fc.Engine != nil {
		return fc.Engine.WbufSize()
	}
	return 4 << 20
}

// extstoreKnob is one `extstore <name> <value>` setting: memcached matches
// the name given as a prefix of the knob's (its strncmp over the token's
// length), in this order.
type extstoreKnob struct {
	name string
	set  func(k *store.FlashKnobs, v uint32)
}

var extstoreKnobs = [...]extstoreKnob{
	{"item_size", func(k *store.FlashKnobs, v uint32) { k.ItemSize = v }},
	{"item_age", func(k *store.FlashKnobs, v uint32) { k.ItemAge = v }},
	{"low_ttl", func(k *store.FlashKnobs, v uint32) { k.LowTTL = v }},
	{"recache_rate", func(k *store.FlashKnobs, v uint32) { k.RecacheRate = v }},
	{"compact_under", func(k *store.FlashKnobs, v uint32) { k.Policy.CompactUnder = uint64(v) }},
	{"drop_under", func(k *store.FlashKnobs, v uint32) { k.Policy.DropUnder = uint64(v) }},
	{"max_sleep", func(k *store.FlashKnobs, v uint32) { k.MaxSleep = v }},
	{"max_frag", nil}, // a double, below
	{"drop_unread", func(k *store.FlashKnobs, v uint32) { k.Policy.DropUnread = v != 0 }},
}

// extstore answers `extstore ...` as memcached 1.6.45 does: it changes the
// live ext_* settings (kept even without a flash tier) and says OK, or
// ERROR for a short line, an unknown knob or a bad number.
func (s *Session) extstore(line []byte, n int) {
	s.text.setNoreply(line, n)
	if s.extstoreSet(line, n) {
		s.reply(rOK)
	} else {
		s.reply(rError)
	}
}

func (s *Session) extstoreSet(line []byte, n int) bool {
	if n < 3 {
		return false
	}
	name, v := s.text.token(line, 1), s.text.token(line, 2)
	if bytes.HasPrefix([]byte("free_memchunks"), name) && n > 3 {
		// Deprecated in memcached and ignored, but still checked.
		cls, ok1 := parseU32Strict(v)
		_, ok2 := parseU32Strict(s.text.token(line, 3))
		return ok1 && ok2 && cls <= maxSlabClassID
	}
	for _, kn := range extstoreKnobs {
		if !bytes.HasPrefix([]byte(kn.name), name) {
			continue
		}
		if kn.set == nil {
			// memcached's strtod leaves 0 in ext_max_frag when it fails.
			f, ok := parseDouble(v)
			if !ok {
				f = 0
			}
			s.env.updateExtSettings(func(k *store.FlashKnobs) { k.Policy.MaxFrag = f })
			return ok
		}
		u, ok := parseU32Strict(v)
		if ok {
			s.env.updateExtSettings(func(k *store.FlashKnobs) { kn.set(k, u) })
		}
		return ok
	}
	return false
}

// parseU32Strict is memcached's mc_toktou32: a decimal that fits 32 bits,
// no sign.
func parseU32Strict(b []byte) (uint32, bool) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		return 0, false
	}
	v, ok := parseUint64(b)
	if !ok || v > 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}

// appendExtstorePages writes memcached's `stats extstore`: four lines per
// page, "N:version" to "N:free_bucket".
func appendExtstorePages(w *statWriter, e *extstore.Engine) {
	extstore.EachPage(e.Pages(nil), func(page int, field string, v uint64) {
		w.uint(strconv.Itoa(page)+":"+field, v)
	})
}
