package extstore

import (
	"sync"
	"testing"
)

// gateFile holds every read until the gate opens.
type gateFile struct {
	File
	gate    chan struct{}
	started chan struct{}
}

func (g *gateFile) ReadAt(b []byte, off int64) (int, error) {
	g.started <- struct{}{}
	<-g.gate
	return g.File.ReadAt(b, off)
}

// flushedRecords writes n small records and waits until they are on the
// file (a last large record pushes the buffer out).
func flushedRecords(t *testing.T, e *Engine, n int) ([]Location, []Record) {
	var locs []Location
	var recs []Record
	for i := range n {
		recs = append(recs, testRecord(i, 200+i))
		locs = append(locs, mustWrite(t, e, BucketDefault, recs[i]))
	}
	mustWrite(t, e, BucketDefault, testRecord(-1, tWbuf-headerSize-10))
	e.WaitWrites()
	return locs, recs
}

// Submit returns while the disk is busy; the read completes later on a
// worker, and io_queue counts what waits.
func TestSubmitDoesNotWaitForDisk(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	gate := &gateFile{gate: make(chan struct{}), started: make(chan struct{}, 8)}
	cfg.Open = func(path string) (File, error) {
		f, err := OpenOSFile(path)
		gate.File = f
		return gate, err
	}
	e := openEngine(t, cfg) // one worker, depth 1
	locs, recs := flushedRecords(t, e, 3)

	results := make(chan *ReadRequest, 3)
	for _, loc := range locs {
		e.Submit(&ReadRequest{Loc: loc, Done: func(r *ReadRequest) { results <- r }})
	}
	<-gate.started // the worker holds the first; two wait
	if q := e.backend.Queued(); q != 2 {
		t.Fatalf("queued %d, want 2", q)
	}
	close(gate.gate)
	got := map[uint32]*ReadRequest{}
	for range locs {
		r := <-results
		got[r.Loc.Offset] = r
	}
	for i, loc := range locs {
		r := got[loc.Offset]
		if r == nil || r.Err != nil || !sameRecord(r.Record, recs[i]) {
			t.Fatalf("read %d: %+v", i, r)
		}
	}
}

// Reads answered without the disk complete inside Submit.
func TestSubmitCompletesInlineWithoutIO(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	rec := testRecord(1, 100)
	loc := mustWrite(t, e, BucketDefault, rec)
	for _, tc := range []struct {
		loc  Location
		want error
	}{{loc, nil}, {Location{Page: 3, Version: 99, Len: 10}, ErrStale}} {
		var done bool
		req := &ReadRequest{Loc: tc.loc, Buf: make([]byte, 0, 4096), Done: func(*ReadRequest) { done = true }}
		e.Submit(req)
		if !done || req.Err != tc.want {
			t.Fatalf("Submit(%+v): done %v, err %v", tc.loc, done, req.Err)
		}
		if tc.want == nil && (!sameRecord(req.Record, rec) || cap(req.Buf) != 4096) {
			t.Fatalf("buffered read: %q, buffer not reused", req.Record.Key)
		}
	}
}

// Many goroutines reading at once through a pool of three workers.
func TestPoolConcurrentReads(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 2)
	cfg.Threads, cfg.IODepth = 3, 2
	e := openEngine(t, cfg)
	locs, recs := flushedRecords(t, e, 50)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				i := (g*31 + j*7) % len(locs)
				got, err := e.Read(locs[i])
				if err != nil || !sameRecord(got, recs[i]) {
					t.Errorf("read %d: %q, %v", i, got.Key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// goBackend runs each read on a goroutine of its own: another Backend
// plugs in through Config.
type goBackend struct{ wg sync.WaitGroup }

func (b *goBackend) Read(op *Op) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		op.Complete(op.File.ReadAt(op.Buf, op.Off))
	}()
}
func (b *goBackend) Queued() int { return 0 }
func (b *goBackend) Close()      { b.wg.Wait() }

func TestCustomBackend(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	cfg.Backend = &goBackend{}
	e := openEngine(t, cfg)
	locs, recs := flushedRecords(t, e, 5)
	for i, loc := range locs {
		if got, err := e.Read(loc); err != nil || !sameRecord(got, recs[i]) {
			t.Fatalf("read %d: %q, %v", i, got.Key, err)
		}
	}
}

// Close completes queued reads; reads after it miss with ErrClosed.
func TestCloseCompletesReads(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	locs, _ := flushedRecords(t, e, 4)
	var wg sync.WaitGroup
	for _, loc := range locs {
		wg.Add(1)
		e.Submit(&ReadRequest{Loc: loc, Done: func(*ReadRequest) { wg.Done() }})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := e.Read(locs[0]); err != ErrClosed {
		t.Fatalf("read after Close: %v", err)
	}
}
