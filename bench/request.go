package bench

import (
	"math/rand/v2"
	"strconv"
)

// valueFill is the payload every set carries (a prefix of it).
var valueFill = func() []byte {
	b := make([]byte, 1<<21)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

// MaxValueLen is the largest value AppendSet can send.
var MaxValueLen = len(valueFill)

// AppendGet appends "get <key>\r\n" for record i.
func AppendGet(b []byte, ks *KeySpace, i int) []byte {
	b = append(b, "get "...)
	b = ks.AppendKey(b, i)
	return append(b, "\r\n"...)
}

// MaxMultiGet bounds the keys of one get: 100 keys of up to 250 bytes stay
// under the 64 KiB line that gocached accepts for gets, and far below the
// reply sizes at which servers start yielding mid-reply.
const MaxMultiGet = 100

// AppendMultiGet appends "get <key> <key>...\r\n": record first, then n-1
// more records drawn from rng. One request, one reply; the server's work
// grows with n while the client's per-request costs (one line out, one
// system call, one reply to match) stay, which is how a load shape makes
// the server the bottleneck. Keys may repeat, as in any uniform draw.
func AppendMultiGet(b []byte, ks *KeySpace, first, n int, rng *rand.Rand) []byte {
	b = append(b, "get "...)
	b = ks.AppendKey(b, first)
	for i := 1; i < n; i++ {
		b = append(b, ' ')
		b = ks.AppendKey(b, rng.IntN(ks.Records()))
	}
	return append(b, "\r\n"...)
}

// AppendSet appends "set <key> 0 0 <size>\r\n<data>\r\n" for record i.
// size must be in [0, MaxValueLen].
func AppendSet(b []byte, ks *KeySpace, i, size int) []byte {
	b = append(b, "set "...)
	b = ks.AppendKey(b, i)
	b = append(b, " 0 0 "...)
	b = strconv.AppendUint(b, uint64(size), 10)
	b = append(b, "\r\n"...)
	b = append(b, valueFill[:size]...)
	return append(b, "\r\n"...)
}
