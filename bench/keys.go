package bench

import (
	"fmt"
	"math"
	"strconv"
)

// MaxKeyLen is the memcached text protocol's key length limit.
const MaxKeyLen = 250

// KeySpace names the records 0..N-1. A key's length comes from the key-size
// distribution evaluated at a hash of the index, so every run (and the
// preload) uses the same name for the same record.
type KeySpace struct {
	lens []uint8 // key length of record i
}

// NewKeySpace builds the key names for records records with sizes from size.
func NewKeySpace(records int, size Distribution) (*KeySpace, error) {
	if records <= 0 {
		return nil, fmt.Errorf("key space: %d records", records)
	}
	ks := &KeySpace{lens: make([]uint8, records)}
	for i := range ks.lens {
		n := clampSize(size.Quantile(unitHash(uint64(i))), 1, MaxKeyLen)
		// A key never gets shorter than its index in decimal, so names stay distinct.
		ks.lens[i] = uint8(max(n, decimalDigits(i)))
	}
	return ks, nil
}

// Records is the number of keys.
func (ks *KeySpace) Records() int { return len(ks.lens) }

// Len is the length of key i.
func (ks *KeySpace) Len(i int) int { return int(ks.lens[i]) }

// AppendKey appends the name of record i: its decimal index zero-padded to
// the key's length.
func (ks *KeySpace) AppendKey(b []byte, i int) []byte {
	for range int(ks.lens[i]) - decimalDigits(i) {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, uint64(i), 10)
}

func decimalDigits(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// clampSize turns a sampled size into an integer in [lo, hi]; sizes are the
// integer part of the sample.
func clampSize(x float64, lo, hi int) int {
	if math.IsNaN(x) || x < float64(lo) {
		return lo
	}
	if x >= float64(hi) {
		return hi
	}
	return int(x)
}

// unitHash maps i to a well-mixed number in [0, 1) (splitmix64 finaliser).
func unitHash(i uint64) float64 {
	z := i + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
