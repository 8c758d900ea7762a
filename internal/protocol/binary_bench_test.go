package protocol

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBinaryGetK is pipelined binary GETK hits of 100-byte values, the
// binary twin of BenchmarkGetPipelined.
func BenchmarkBinaryGetK(b *testing.B) {
	s := NewSession(benchEnv(b))
	var in strings.Builder
	for i := range benchBatch {
		key := "key:" + strconv.Itoa(i)
		runBatch(b, s, []byte(binReq(opSetQ, key, setExt(0, 0), strings.Repeat("v", 100), 0, 0)), nil)
		in.WriteString(binReq(opGetK, key, "", "", uint32(i), 0))
	}
	runBench(b, s, []byte(in.String()))
}

// BenchmarkBinarySetQ is pipelined quiet sets over a fixed key set.
func BenchmarkBinarySetQ(b *testing.B) {
	s := NewSession(benchEnv(b))
	var in strings.Builder
	for i := range benchBatch {
		in.WriteString(binReq(opSetQ, "key:"+strconv.Itoa(i), setExt(0, 0), strings.Repeat("v", 100), 0, 0))
	}
	runBench(b, s, []byte(in.String()))
}

func TestBinaryPathAllocs(t *testing.T) {
	s := NewSession(newTestEnv(t))
	drive(t, s, []byte(binReq(opSet, "k", setExt(1, 0), "abc", 0, 0)+binReq(opSet, "n", setExt(0, 0), "5", 0, 0)))
	in := []byte(binReq(opGet, "k", "", "", 1, 0) + binReq(opGetK, "k", "", "", 2, 0) + binReq(opGetKQ, "nope", "", "", 3, 0) +
		binReq(opGet, "nope", "", "", 4, 0) + binReq(opSetQ, "k", setExt(1, 0), "abc", 5, 0) + binReq(opIncrement, "n", arithExt(1, 0, 0), "", 6, 0) +
		binReq(opDelete, "nope", "", "", 7, 0) + binReq(opGAT, "k", be32(0), "", 8, 0) + binReq(opNoop, "", "", "", 9, 0))
	out := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(200, func() {
		_, out, _ = s.Process(in, out[:0])
	})
	if allocs != 0 {
		t.Fatalf("binary path allocates %.1f times per batch", allocs)
	}
}
