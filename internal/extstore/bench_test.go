package extstore

import (
	"path/filepath"
	"testing"
)

// benchConfig is memcached's minimum sizes: 2 MB pages and buffers, a 32 MB
// file.
func benchConfig(b *testing.B) Config {
	cfg := DefaultConfig(FileSpec{Path: filepath.Join(b.TempDir(), "bench"), Size: 32 << 20})
	cfg.PageSize, cfg.WbufSize = 2<<20, 2<<20
	return cfg
}

// BenchmarkWrite appends 4 KB values, the store evicting as it fills.
func BenchmarkWrite(b *testing.B) {
	e := openEngine(b, benchConfig(b))
	rec := testRecord(1, 4096)
	b.SetBytes(int64(rec.Size()))
	b.ReportAllocs()
	for b.Loop() {
		mustWrite(b, e, BucketDefault, rec)
	}
}

// BenchmarkRead reads 4 KB values back from the file, through the pool.
func BenchmarkRead(b *testing.B) {
	e := openEngine(b, benchConfig(b))
	var locs []Location
	for i := range 2000 {
		locs = append(locs, mustWrite(b, e, BucketDefault, testRecord(i, 4096)))
	}
	mustWrite(b, e, BucketDefault, testRecord(-1, 2<<20-headerSize-10)) // push the last buffer out
	e.WaitWrites()
	b.SetBytes(int64(locs[0].Len))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.Read(locs[i%len(locs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
