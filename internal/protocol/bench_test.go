package protocol

import (
	"bytes"
	"strconv"
	"testing"
)

// benchBatch is how many requests each benchmark buffer pipelines. One b.N
// op is one request (one key for multigets), so ns/op is per request.
const benchBatch = 100

// runBatch processes in completely, as an engine would, reusing out.
func runBatch(b *testing.B, s *Session, in, out []byte) []byte {
	for len(in) > 0 {
		n, o, st := s.Process(in, out[:0])
		out = o
		if st == Close || n == 0 && st == NeedMore {
			b.Fatalf("stuck: status %v with %d bytes left", st, len(in))
		}
		in = in[n:]
	}
	return out
}

func benchEnv(b *testing.B) *Env {
	env := newTestEnv(b)
	env.Settings.ReqsPerEvent = 1 << 30
	return env
}

// BenchmarkGetPipelined measures parse+execute of pipelined `get` hits of a
// 100-byte value, one op per request.
func BenchmarkGetPipelined(b *testing.B) {
	env := benchEnv(b)
	s := NewSession(env)
	var in bytes.Buffer
	for i := range benchBatch {
		key := "key:" + strconv.Itoa(i)
		runBatch(b, s, []byte("set "+key+" 0 0 100\r\n"+string(bytes.Repeat([]byte("v"), 100))+"\r\n"), nil)
		in.WriteString("get " + key + "\r\n")
	}
	buf := in.Bytes()
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchBatch {
		out = runBatch(b, s, buf, out)
	}
}

// BenchmarkGetMissPipelined isolates the parser: misses do little store work.
func BenchmarkGetMissPipelined(b *testing.B) {
	s := NewSession(benchEnv(b))
	var in bytes.Buffer
	for i := range benchBatch {
		in.WriteString("get miss:" + strconv.Itoa(i) + "\r\n")
	}
	buf := in.Bytes()
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchBatch {
		out = runBatch(b, s, buf, out)
	}
}

// BenchmarkMultiget10 measures a 10-key get, one op per key.
func BenchmarkMultiget10(b *testing.B) {
	s := NewSession(benchEnv(b))
	line := []byte("get")
	for i := range 10 {
		key := "key:" + strconv.Itoa(i)
		runBatch(b, s, []byte("set "+key+" 0 0 32\r\n"+string(bytes.Repeat([]byte("v"), 32))+"\r\n"), nil)
		line = append(line, " "+key...)
	}
	line = append(line, "\r\n"...)
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 10 {
		out = runBatch(b, s, line, out)
	}
}

// BenchmarkSetPipelined measures pipelined 100-byte sets over a fixed key set.
// Allocations here come from the store, not from the protocol.
func BenchmarkSetPipelined(b *testing.B) {
	s := NewSession(benchEnv(b))
	var in bytes.Buffer
	value := string(bytes.Repeat([]byte("v"), 100))
	for i := range benchBatch {
		in.WriteString("set key:" + strconv.Itoa(i) + " 0 0 100\r\n" + value + "\r\n")
	}
	buf := in.Bytes()
	out := make([]byte, 0, 64<<10)
	runBatch(b, s, buf, out) // store every key once: steady state overwrites
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchBatch {
		out = runBatch(b, s, buf, out)
	}
}

// BenchmarkSetSplit measures a set whose data arrives in a second read: the
// command line is parsed twice.
func BenchmarkSetSplit(b *testing.B) {
	s := NewSession(benchEnv(b))
	req := []byte("set key:1 0 0 100\r\n" + string(bytes.Repeat([]byte("v"), 100)) + "\r\n")
	head, out := req[:40], make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n, o, _ := s.Process(head, out[:0])
		if n != 0 {
			b.Fatal("partial set consumed")
		}
		_, out, _ = s.Process(req, o[:0])
	}
}

func TestGetPathAllocs(t *testing.T) {
	env := newTestEnv(t)
	s := NewSession(env)
	drive(t, s, []byte("set k 0 0 3\r\nabc\r\n"))
	in := []byte("get k\r\ngets k\r\nget k nope k\r\ntouch k 0\r\ndelete nope\r\nincr nope 1\r\n")
	out := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(200, func() {
		_, out, _ = s.Process(in, out[:0])
	})
	if allocs != 0 {
		t.Fatalf("read path allocates %.1f times per batch", allocs)
	}
}

// BenchmarkGetDepth1 is one `get` hit per Process call, as a client with
// one request in flight makes the engines call it: the per-call costs
// (the connection memory accounting of connmem.go among them) are paid
// by every request here.
func BenchmarkGetDepth1(b *testing.B) {
	s := NewSession(benchEnv(b))
	runBatch(b, s, []byte("set key:1 0 0 100\r\n"+string(bytes.Repeat([]byte("v"), 100))+"\r\n"), nil)
	req := []byte("get key:1\r\n")
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out = runBatch(b, s, req, out)
	}
}

// BenchmarkGetReads16 is the user-space side of enginecmp's 16x16 shape:
// 10,000 records of 30-byte keys and 100-byte values, each read holding 16
// gets of keys spread over all of them, one op per request.
func BenchmarkGetReads16(b *testing.B) {
	const records, perRead = 10000, 16
	s := NewSession(benchEnv(b))
	value := string(bytes.Repeat([]byte("v"), 100))
	keys := make([]string, records)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i) + ":" + string(bytes.Repeat([]byte("k"), 30))
		keys[i] = keys[i][:30]
		runBatch(b, s, []byte("set "+keys[i]+" 0 0 100\r\n"+value+"\r\n"), nil)
	}
	// 256 reads, each of 16 gets; the keys stride through the records so
	// that consecutive gets land on unrelated index lines.
	var reads [][]byte
	for r, k := 0, 0; r < 256; r++ {
		var in bytes.Buffer
		for range perRead {
			k = (k + 7919) % records
			in.WriteString("get " + keys[k] + "\r\n")
		}
		reads = append(reads, in.Bytes())
	}
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i, r := 0, 0; i < b.N; i, r = i+perRead, (r+1)%len(reads) {
		out = runBatch(b, s, reads[r], out)
	}
}
