package bench

import "strconv"

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
