package protocol

import (
	"encoding/binary"
	"strings"
	"testing"
)

// memcached 1.6.43 (e3b7d33, "binprot: avoid item refcount overflows") made
// the binary get path refuse an item once 60,000 references to it are held:
// a client that pipelines that many hits on one key without reading the
// replies could wrap the item's 16-bit reference count and free it in use.
// gocached has no such count: a value up to 64 KiB is copied into the reply
// as the request is answered, and a larger one is pinned only while it is
// sent, one at a time per connection (budget.go). These tests send the same
// input, far past the wrap point, and check that every get is answered with
// the value and that no pin is left.

// binaryHitCount counts the responses in out and checks each is opcode op
// with value val (or a NOOP).
func binaryHitCount(t *testing.T, out []byte, op uint8, val string) (hits, noops int) {
	t.Helper()
	for len(out) > 0 {
		if len(out) < binaryHeaderLen {
			t.Fatalf("truncated response header: %d bytes", len(out))
		}
		extLen := int(out[4])
		keyLen := int(binary.BigEndian.Uint16(out[2:4]))
		bodyLen := int(binary.BigEndian.Uint32(out[8:12]))
		status := binary.BigEndian.Uint16(out[6:8])
		body := out[binaryHeaderLen : binaryHeaderLen+bodyLen]
		switch {
		case out[1] == opNoop:
			noops++
		case out[1] != op || status != 0:
			t.Fatalf("response %d: opcode %#x status %d, want a hit of %#x", hits, out[1], status, op)
		case string(body[extLen+keyLen:]) != val:
			t.Fatalf("response %d: wrong value (%d bytes)", hits, len(body)-extLen-keyLen)
		default:
			hits++
		}
		out = out[binaryHeaderLen+bodyLen:]
	}
	return hits, noops
}

func TestBinaryManyPipelinedHitsOneKey(t *testing.T) {
	const gets = 70_000 // past memcached's 60,000 limit and a 16-bit count's wrap
	env := newTestEnv(t)
	env.ResumesPending = true
	in := binReq(opSet, "k", setExt(0, 0), "v", 0, 0) + strings.Repeat(binReq(opGetQ, "k", "", "", 1, 0), gets) +
		binReq(opNoop, "", "", "", 2, 0)
	got := drive(t, NewSession(env), []byte(in))
	// The SET's own reply is first.
	out := []byte(got.out)
	setLen := binaryHeaderLen + int(binary.BigEndian.Uint32(out[8:12]))
	hits, noops := binaryHitCount(t, out[setLen:], opGetQ, "v")
	if hits != gets || noops != 1 {
		t.Fatalf("%d hits and %d NOOPs, want %d and 1", hits, noops, gets)
	}
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d values still pinned", p)
	}
}

// TestBinaryPipelinedLargeHitsPinOne sends many gets of a value that is
// sent in pieces, none of the replies read until the last request is in:
// at most one value is pinned at a time, and none once all are sent.
func TestBinaryPipelinedLargeHitsPinOne(t *testing.T) {
	const gets = 64
	env := newTestEnv(t)
	env.ResumesPending = true
	val := strings.Repeat("x", 100<<10)
	s := NewSession(env)
	buf := []byte(binReq(opSet, "k", setExt(0, 0), val, 0, 0) + strings.Repeat(binReq(opGetK, "k", "", "", 1, 0), gets) +
		binReq(opNoop, "", "", "", 2, 0))
	var out []byte
	for calls := 0; ; calls++ {
		if calls > 100_000 {
			t.Fatal("no end to the replies")
		}
		n, o, st := s.Process(buf, out)
		out, buf = o, buf[n:]
		if p := env.Store.Pins(); p > 1 {
			t.Fatalf("%d values pinned at once", p)
		}
		if st == Close {
			t.Fatal("connection closed")
		}
		if len(buf) == 0 && !s.Pending() {
			break
		}
	}
	setLen := binaryHeaderLen + int(binary.BigEndian.Uint32(out[8:12]))
	hits, noops := binaryHitCount(t, out[setLen:], opGetK, val)
	if hits != gets || noops != 1 {
		t.Fatalf("%d hits and %d NOOPs, want %d and 1", hits, noops, gets)
	}
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d values still pinned", p)
	}
}
