package protocol

import (
	"bytes"
	"strconv"
	"testing"
)

// benchMeta stores benchBatch 100-byte items and returns a pipelined buffer
// of one request per key built by req.
func benchMeta(b *testing.B, s *Session, req func(key string) string) []byte {
	var in bytes.Buffer
	for i := range benchBatch {
		key := "key:" + strconv.Itoa(i)
		runBatch(b, s, []byte("set "+key+" 0 0 100\r\n"+string(bytes.Repeat([]byte("v"), 100))+"\r\n"), nil)
		in.WriteString(req(key))
	}
	return in.Bytes()
}

func runBench(b *testing.B, s *Session, buf []byte) {
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchBatch {
		out = runBatch(b, s, buf, out)
	}
}

// BenchmarkMetaGetPipelined is `mg <key> v` hits, the meta twin of
// BenchmarkGetPipelined.
func BenchmarkMetaGetPipelined(b *testing.B) {
	s := NewSession(benchEnv(b))
	runBench(b, s, benchMeta(b, s, func(k string) string { return "mg " + k + " v\r\n" }))
}

// BenchmarkMetaGetFlags is an mg hit asking for most return flags.
func BenchmarkMetaGetFlags(b *testing.B) {
	s := NewSession(benchEnv(b))
	runBench(b, s, benchMeta(b, s, func(k string) string { return "mg " + k + " v t f c k s Oabc\r\n" }))
}

// BenchmarkMetaSetPipelined is `ms <key> 100` over a fixed key set.
func BenchmarkMetaSetPipelined(b *testing.B) {
	s := NewSession(benchEnv(b))
	value := string(bytes.Repeat([]byte("v"), 100))
	runBench(b, s, benchMeta(b, s, func(k string) string { return "ms " + k + " 100 T0\r\n" + value + "\r\n" }))
}

func TestMetaPathAllocs(t *testing.T) {
	s := NewSession(newTestEnv(t))
	drive(t, s, []byte("set k 0 0 3\r\nabc\r\nset n 0 0 1\r\n5\r\n"))
	in := []byte("mg k v\r\nmg k v t f c k s h l Oabc\r\nmg nope v q\r\nmg nope k\r\nms k 3 T0 c\r\nabc\r\n" +
		"ma n v\r\nmd nope q\r\nmn\r\nme k\r\nmg aw== b k v\r\n")
	out := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(200, func() {
		_, out, _ = s.Process(in, out[:0])
	})
	if allocs != 0 {
		t.Fatalf("meta path allocates %.1f times per batch", allocs)
	}
}
