package protocol

import (
	"cmp"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// Per-prefix statistics, memcached's `stats detail on|off|dump` and -D.
// A key's prefix is what precedes the first delimiter; keys without one are
// not counted. get counts every key a get/gets/gat/gats names (hit when
// found), set every storage command whose line parsed, del every delete of a
// valid key, as memcached counts them. Collection costs one atomic load per
// command while off.

// maxPrefixes bounds the table: memcached's grows without limit; beyond this
// many distinct prefixes new ones are not counted.
const maxPrefixes = 1 << 16

type prefixCounters struct{ get, hit, set, del uint64 }

type prefixStats struct {
	// state: 0 follows Settings.DetailDelimiter (on when set), 1 on, 2 off.
	state atomic.Int32
	mu    sync.Mutex
	byKey map[string]*prefixCounters
	order []string // first-seen order, for the dump
}

const (
	detailFollow = iota
	detailOn
	detailOff
)

func (e *Env) delimiter() byte {
	if st := e.Settings; st != nil && st.DetailDelimiter != 0 {
		return st.DetailDelimiter
	}
	return ':'
}

// detailEnabled reports whether per-prefix stats are being collected.
func (e *Env) detailEnabled() bool {
	switch e.detail.state.Load() {
	case detailOn:
		return true
	case detailOff:
		return false
	}
	return e.Settings != nil && e.Settings.DetailDelimiter != 0
}

// recordPrefix counts one operation on key's prefix; op is 'g', 's' or 'd'.
func (e *Env) recordPrefix(key []byte, op byte, hit bool) {
	delim := e.delimiter()
	n := -1
	for i, c := range key {
		if c == 0 {
			break // memcached's stats_prefix_find stops at a NUL: no prefix
		}
		if c == delim {
			n = i
			break
		}
	}
	if n < 0 {
		return
	}
	p := &e.detail
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.byKey[string(key[:n])]
	if c == nil {
		if len(p.order) >= maxPrefixes {
			return
		}
		if p.byKey == nil {
			p.byKey = map[string]*prefixCounters{}
		}
		c = &prefixCounters{}
		name := string(key[:n])
		p.byKey[name] = c
		p.order = append(p.order, name)
	}
	switch op {
	case 'g':
		c.get++
		if hit {
			c.hit++
		}
	case 's':
		c.set++
	case 'd':
		c.del++
	}
}

// appendDetailDump writes memcached's `stats detail dump` lines and END,
// in the order of memcached's prefix table: by bucket (the prefix's hash
// by hash_algorithm: murmur3 unless -o said jenkins, xxh3 or no_modern;
// modulo 256), newest first within one.
func (e *Env) appendDetailDump(b []byte) []byte {
	hash := murmur3
	switch e.Settings.tuning().HashAlgorithm {
	case "jenkins":
		hash = jenkins
	case "xxh3":
		hash = xxh3Low
	}
	p := &e.detail
	p.mu.Lock()
	defer p.mu.Unlock()
	order := make([]int, len(p.order))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		bx, by := hash(p.order[x])%prefixBuckets, hash(p.order[y])%prefixBuckets
		if bx != by {
			return cmp.Compare(bx, by)
		}
		return cmp.Compare(y, x)
	})
	for _, i := range order {
		name := p.order[i]
		c := p.byKey[name]
		b = append(b, "PREFIX "...)
		b = append(b, name...)
		b = append(b, " get "...)
		b = strconv.AppendUint(b, c.get, 10)
		b = append(b, " hit "...)
		b = strconv.AppendUint(b, c.hit, 10)
		b = append(b, " set "...)
		b = strconv.AppendUint(b, c.set, 10)
		b = append(b, " del "...)
		b = strconv.AppendUint(b, c.del, 10)
		b = append(b, crlf...)
	}
	return append(b, rEnd...)
}

// prefixBuckets is memcached's PREFIX_HASH_SIZE.
const prefixBuckets = 256

// xxh3Low is memcached's XXH3_hash: XXH3's 64-bit hash truncated to 32.
func xxh3Low(s string) uint32 { return uint32(xxh3.HashString(s)) }

// murmur3 is memcached's MurmurHash3_x86_32 (seed 0).
func murmur3(s string) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	n := len(s) &^ 3
	for i := 0; i < n; i += 4 {
		k := uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch len(s) & 3 {
	case 3:
		k ^= uint32(s[n+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(s[n+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(s[n])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(s))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// resetDetail forgets every prefix (`stats reset`).
func (e *Env) resetDetail() {
	p := &e.detail
	p.mu.Lock()
	p.byKey, p.order = nil, nil
	p.mu.Unlock()
}

// statsDetail answers `stats detail on|off|dump`.
func (s *Session) statsDetail(line []byte, n int) {
	if st := s.env.Settings; st != nil && st.DumpDisabled {
		// -X covers stats detail too since memcached 1.6.37.
		s.replyLogged("CLIENT_ERROR stats detail not allowed\r\n")
		return
	}
	sub := ""
	if n > 2 {
		sub = string(s.text.token(line, 2))
	}
	switch sub {
	case "on":
		s.env.detail.state.Store(detailOn)
		s.replyLogged(rOK)
	case "off":
		s.env.detail.state.Store(detailOff)
		s.replyLogged(rOK)
	case "dump":
		s.out = s.env.appendDetailDump(s.out)
	default:
		s.replyLogged("CLIENT_ERROR usage: stats detail on|off|dump\r\n")
	}
}
