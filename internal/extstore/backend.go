package extstore

import "sync"

// Op is one file read for a Backend.
type Op struct {
	File File
	Off  int64
	Buf  []byte
	// Complete is called once with ReadAt's result, on any goroutine.
	Complete func(n int, err error)
	next     *Op
}

// Backend runs the engine's file reads off the caller's goroutine. Read
// must not block on the disk; a ring-based back end can get the
// descriptor from a File that has an Fd() uintptr method.
type Backend interface {
	Read(op *Op)
	// Queued is the reads waiting for the disk (stats' io_queue).
	Queued() int
	// Close completes what is queued and stops; the engine calls it.
	Close()
}

// pool is the default Backend: a fixed set of goroutines (ext_threads)
// taking up to depth reads (ext_io_depth) off one queue at a time.
type pool struct {
	mu     sync.Mutex
	wake   sync.Cond
	head   *Op
	tail   *Op
	queued int
	depth  int
	stop   bool
	done   sync.WaitGroup
}

// NewPool starts a pool Backend of threads goroutines.
func NewPool(threads, depth int) Backend {
	p := &pool{depth: max(depth, 1)}
	p.wake.L = &p.mu
	for range max(threads, 1) {
		p.done.Add(1)
		go p.work()
	}
	return p
}

// Read queues op; it only takes the queue's lock. After Close it
// completes op at once with ErrClosed.
func (p *pool) Read(op *Op) {
	op.next = nil
	p.mu.Lock()
	if p.stop {
		p.mu.Unlock()
		op.Complete(0, ErrClosed)
		return
	}
	if p.tail == nil {
		p.head = op
	} else {
		p.tail.next = op
	}
	p.tail = op
	p.queued++
	p.mu.Unlock()
	p.wake.Signal()
}

func (p *pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

func (p *pool) Close() {
	p.mu.Lock()
	p.stop = true
	p.mu.Unlock()
	p.wake.Broadcast()
	p.done.Wait()
}

func (p *pool) work() {
	defer p.done.Done()
	for {
		p.mu.Lock()
		for p.head == nil && !p.stop {
			p.wake.Wait()
		}
		if p.head == nil {
			p.mu.Unlock()
			return
		}
		// A small batch, so an idle worker finds work queued behind a
		// busy one.
		batch := p.head
		last, n := batch, 1
		for ; n < p.depth && last.next != nil; n++ {
			last = last.next
		}
		p.head = last.next
		if p.head == nil {
			p.tail = nil
		}
		last.next = nil
		p.queued -= n
		p.mu.Unlock()
		for op := batch; op != nil; {
			next := op.next
			n, err := op.File.ReadAt(op.Buf, op.Off)
			op.Complete(n, err)
			op = next
		}
	}
}
