package protocol

import (
	"bytes"
	"unsafe"

	"github.com/gocached/gocached/internal/store"
)

// prefetchKeys bounds the keys one read hands the store as a hint.
const prefetchKeys = 16

// prefetchGets tells the store which keys the get, gets and mg lines complete
// at the front of in (at most lines of them) are about to look up, so that
// it can start their cache misses together (store.Prefetch) rather than
// one get at a time. It returns how many bytes of in it looked at. A hint
// only: the lines are parsed again, properly, when served, and a key read
// wrongly here costs a wasted prefetch.
//
// The keys' hashes are kept (s.prefetched) for the lookups that serve them.
func (s *Session) prefetchGets(in []byte, lines int) int {
	var buf [prefetchKeys][]byte
	keys, seen := getKeysAhead(in, lines, buf[:0])
	p := &s.prefetched
	p.n, p.next = 0, 0
	if len(keys) > 1 {
		for i, k := range keys {
			p.at[i], p.length[i] = keyAddr(k), uint8(len(k))
		}
		p.n = uint8(len(keys))
		hint(s.env.Store, keys, p.hashes[:len(keys)])
	}
	return seen
}

// hint hashes keys into hashes (as long) and asks the store to prefetch
// them.
func hint(st *store.Store, keys [][]byte, hashes []store.KeyHash) {
	for i, k := range keys {
		hashes[i] = store.HashKey(k)
	}
	st.Prefetch(keys, hashes)
}

// prefetchedKeys is what the last prefetch of a Process call hashed: where
// each key lies (the address of its first byte in the call's input, and its
// length) and its hash, which the lookup serving that very key takes
// rather than hash it again. Addresses mean something only within the call
// that took them: process forgets them when it starts.
type prefetchedKeys struct {
	at      [prefetchKeys]uintptr
	length  [prefetchKeys]uint8 // keys run to store.MaxKeyLen, 250
	hashes  [prefetchKeys]store.KeyHash
	n, next uint8
}

// hashOf returns key's hash if it is one of the prefetched keys, the same
// bytes of the same input, at or after the last one taken (the lines are
// served in order).
func (p *prefetchedKeys) hashOf(key []byte) (store.KeyHash, bool) {
	at := keyAddr(key)
	for i := p.next; i < p.n; i++ {
		if p.at[i] == at && int(p.length[i]) == len(key) {
			p.next = i + 1
			return p.hashes[i], true
		}
	}
	return 0, false
}

// hashKey is key's store hash, from the prefetch when it took one.
func (s *Session) hashKey(key []byte) store.KeyHash {
	if h, ok := s.prefetched.hashOf(key); ok {
		return h
	}
	return store.HashKey(key)
}

func keyAddr(k []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(k))) }

// PrefetchInputs is the store hint across connections: an engine holding
// the new input of several connections before it serves any (the receives
// one io_uring wait returned) passes them all, and the keys of the get
// lines complete at the front of each start their cache misses together
// (Store.Prefetch), up to 16 at a time. At depth 1 every read holds one
// request, so a Session's own pre-pass (prefetchGets) finds nothing to
// overlap with, and each get met its index and item misses alone; only
// such one-line inputs are taken (inputKeys). An input that ends a line
// begun in an earlier read yields nothing, or at worst a wasted prefetch.
func (e *Env) PrefetchInputs(ins [][]byte) {
	var buf [prefetchKeys][]byte
	var hashes [prefetchKeys]store.KeyHash
	for len(ins) > 0 {
		var keys [][]byte
		if keys, ins = inputKeys(ins, buf[:0]); len(keys) > 1 {
			hint(e.Store, keys, hashes[:len(keys)])
		}
	}
}

// inputKeys appends to keys, up to its capacity, the keys of the inputs at
// the front of ins that hold one complete line, a get, gets or mg
// (getKeysAhead), and returns them and the inputs it did not reach. A read
// of several lines is left to its Session's own pre-pass, which
// prefetches them all.
func inputKeys(ins [][]byte, keys [][]byte) ([][]byte, [][]byte) {
	for i, in := range ins {
		if len(keys) == cap(keys) {
			return keys, ins[i:]
		}
		if bytes.IndexByte(in, '\n') == len(in)-1 {
			keys, _ = getKeysAhead(in, 1, keys)
		}
	}
	return keys, nil
}

// getKeysAhead appends to keys (up to its capacity) the keys of the get,
// gets and mg lines complete at the front of in, at most lines of them, and
// returns them and how many bytes of in it looked at, through the end of the
// last line. It stops after the first line of any other command: what
// follows a storage line is its data.
func getKeysAhead(in []byte, lines int, keys [][]byte) ([][]byte, int) {
	seen := 0
	for ; lines > 0 && len(keys) < cap(keys); lines-- {
		eol := bytes.IndexByte(in[seen:], '\n')
		if eol < 0 {
			break
		}
		line := in[seen : seen+eol]
		seen += eol + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		var args []byte
		single := false
		switch {
		case len(line) > 4 && string(line[:4]) == "get ":
			args = line[4:]
		case len(line) > 5 && string(line[:5]) == "gets ":
			args = line[5:]
		case len(line) > 3 && string(line[:3]) == "mg ":
			args, single = line[3:], true // the key, then flags
		default:
			return keys, seen
		}
		for len(args) > 0 && len(keys) < cap(keys) {
			key := args
			if sp := bytes.IndexByte(args, ' '); sp >= 0 {
				key, args = args[:sp], args[sp+1:]
			} else {
				args = nil
			}
			if len(key) > 0 && len(key) <= store.MaxKeyLen {
				keys = append(keys, key)
			}
			if single {
				break
			}
		}
	}
	return keys, seen
}
