package extstore

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Every fault on the read path is a counted miss, never a wrong value.
func TestReadFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault func(*faultFile)
		want  error
		count func(counters) uint64
	}{
		{"short read", func(f *faultFile) { f.short = 7 }, ErrShort, func(c counters) uint64 { return c.readShort }},
		{"EIO", func(f *faultFile) { f.readErr = &os.PathError{Op: "read", Path: "x", Err: syscall.EIO} }, ErrIO, func(c counters) uint64 { return c.readIOErrors }},
		{"vanished file", func(f *faultFile) { f.readErr = os.ErrClosed }, ErrIO, func(c counters) uint64 { return c.readIOErrors }},
		{"bit flip", func(f *faultFile) { f.flip = true }, ErrChecksum, func(c counters) uint64 { return c.readBadCRC }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, files := faultConfig(t.TempDir(), 1)
			e := openEngine(t, cfg)
			rec := testRecord(7, 3000)
			loc := mustWrite(t, e, BucketDefault, rec)
			// Fill the buffer so the record goes to the file.
			mustWrite(t, e, BucketDefault, testRecord(8, tWbuf-headerSize-8-3100))
			mustWrite(t, e, BucketDefault, testRecord(9, 100))
			e.WaitWrites()
			if got, err := e.Read(loc); err != nil || !sameRecord(got, rec) {
				t.Fatalf("clean read: %q, %v", got.Key, err)
			}
			(*files)[0].set(tt.fault)
			got, err := e.Read(loc)
			if !errors.Is(err, tt.want) || got.Value != nil {
				t.Fatalf("Read = %q, %v; want a miss with %v", got.Value, err, tt.want)
			}
			e.mu.Lock()
			n := tt.count(e.counters)
			e.mu.Unlock()
			if n != 1 {
				t.Fatalf("miss counted %d times, want 1", n)
			}
			(*files)[0].set(func(f *faultFile) { f.readErr, f.short, f.flip = nil, 0, false })
			if got, err := e.Read(loc); err != nil || !sameRecord(got, rec) {
				t.Fatalf("read after the fault cleared: %q, %v", got.Key, err)
			}
		})
	}
}

// A buffer that fails to reach the file takes its page with it: the
// page's locations miss, as its bytes are not on flash.
func TestWriteErrorReclaimsPage(t *testing.T) {
	cfg, files := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	(*files)[0].set(func(f *faultFile) { f.writeErr = syscall.ENOSPC })
	loc := mustWrite(t, e, BucketDefault, testRecord(1, tWbuf/2))
	mustWrite(t, e, BucketDefault, testRecord(2, tWbuf/2)) // fills the buffer
	e.WaitWrites()
	if _, err := e.Read(loc); !errors.Is(err, ErrStale) {
		t.Fatalf("Read(%+v) on a page whose write failed: %v, want ErrStale", loc, err)
	}
	e.mu.Lock()
	writeErrors := e.counters.writeErrors
	e.mu.Unlock()
	if d := e.Pages(nil)[loc.Page]; writeErrors != 1 || d.Version == loc.Version {
		t.Fatalf("write errors %d, page %+v; want 1 and the page reclaimed", writeErrors, d)
	}
	(*files)[0].set(func(f *faultFile) { f.writeErr = nil })
	rec := testRecord(4, 500)
	loc = mustWrite(t, e, BucketDefault, rec)
	if got, err := e.Read(loc); err != nil || !sameRecord(got, rec) {
		t.Fatalf("write after the fault cleared: %q, %v", got.Key, err)
	}
}

// A file cut short under the engine (another process truncated it) gives
// short reads: misses, not zeros passed off as a value.
func TestTruncatedFileReadsMiss(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	var locs []Location
	for i := range 5 {
		locs = append(locs, mustWrite(t, e, BucketDefault, quarterPage(i)))
	}
	e.WaitWrites()
	if err := os.Truncate(cfg.Files[0].Path, int64(locs[2].Offset)+10); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Read(locs[1]); err != nil {
		t.Fatalf("record before the cut: %v", err)
	}
	for _, loc := range locs[2:4] {
		if rec, err := e.Read(loc); !errors.Is(err, ErrShort) {
			t.Fatalf("Read(%+v) past the cut = %q, %v; want ErrShort", loc, rec.Key, err)
		}
	}
}
