package extstore

// ReadRequest is one asynchronous read: the caller sets Loc, Done and
// optionally Buf, and gets Record or Err in Done.
type ReadRequest struct {
	Loc Location
	// Buf is reused for the record when its capacity holds Loc.Len.
	Buf []byte
	// Done is called once. It runs before Submit returns when no disk
	// read is needed (the record is still in a write buffer, or the
	// location is stale), else on a back end goroutine: a reactor hands
	// the result back to its own loop from there.
	Done func(*ReadRequest)

	// Record is the record read; its slices point into Buf.
	Record Record
	// Err is why the read is a miss (ErrStale, ErrChecksum, ErrShort,
	// ErrIO, ErrClosed); nil with a Record.
	Err error

	e    *Engine
	plan readPlan
	op   Op
}

// Submit starts req's read and returns without waiting for the disk.
func (e *Engine) Submit(req *ReadRequest) {
	if cap(req.Buf) >= int(req.Loc.Len) {
		req.Buf = req.Buf[:req.Loc.Len]
	} else {
		req.Buf = make([]byte, req.Loc.Len)
	}
	req.Record, req.Err = Record{}, nil
	e.mu.Lock()
	shut := e.shut
	e.mu.Unlock()
	if shut {
		req.Err = ErrClosed
		req.Done(req)
		return
	}
	req.e = e
	req.plan = e.planRead(req.Loc, req.Buf)
	if req.plan.done {
		req.Record, req.Err = e.finishRead(req.plan, req.Buf, len(req.Buf), nil)
		req.Done(req)
		return
	}
	req.op = Op{File: req.plan.file, Off: req.plan.off, Buf: req.Buf, Complete: req.complete}
	e.backend.Read(&req.op)
}

func (req *ReadRequest) complete(n int, err error) {
	req.Record, req.Err = req.e.finishRead(req.plan, req.Buf, n, err)
	req.plan = readPlan{}
	req.Done(req)
}

// Read reads loc and waits for it: for tests and tools, not a reactor.
func (e *Engine) Read(loc Location) (Record, error) {
	done := make(chan struct{})
	req := &ReadRequest{Loc: loc, Done: func(*ReadRequest) { close(done) }}
	e.Submit(req)
	<-done
	return req.Record, req.Err
}
