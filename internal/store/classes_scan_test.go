package store

import (
	"fmt"
	"testing"
)

// TestClassesScanCountsDeadRecords pins that Classes reads at most
// oldestScan records from each ring's tail, dead ones included: a ring that
// has not wrapped keeps every overwritten record, and walking them all to
// find oldestScan live ones made `stats items` cost milliseconds.
func TestClassesScanCountsDeadRecords(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	v := make([]byte, 100)
	for i := range 20 * oldestScan * len(s.shards) {
		s.Set(ModeSet, fmt.Appendf(nil, "ow:%d", i%10), 0, 0, v, 0)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		visited := 0
		sh.forEachRecordUntil(func(pos int, dead bool) bool {
			visited++
			return visited < oldestScan
		})
		if visited > oldestScan {
			t.Fatalf("shard %d: visited %d records, want at most %d", i, visited, oldestScan)
		}
	}
	var items uint64
	for _, c := range s.Classes() {
		items += c.Items
	}
	if items != 10 {
		t.Fatalf("items %d, want 10", items)
	}
}
