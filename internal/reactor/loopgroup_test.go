package reactor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLoop runs until the group quits (and, if stubborn, until forced) or
// fails at once with err.
type fakeLoop struct {
	g        *LoopGroup
	err      error
	stubborn bool
	wake     chan struct{}
	running  chan struct{} // closed when Run starts
	released atomic.Int32
}

func newFakeLoop(g *LoopGroup) *fakeLoop {
	return &fakeLoop{g: g, wake: make(chan struct{}, 1), running: make(chan struct{})}
}

func (l *fakeLoop) Run() error {
	close(l.running)
	if l.err != nil {
		return l.err
	}
	for !(l.g.Quitting() && (!l.stubborn || l.g.Forced())) {
		select {
		case <-l.wake:
		case <-time.After(time.Second):
		}
	}
	return nil
}
func (l *fakeLoop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}
func (l *fakeLoop) Release() { l.released.Add(1) }

func TestLoopGroupShutdown(t *testing.T) {
	var g LoopGroup
	stopped := 0
	g.Init("test", nil, func() { stopped++ })
	a, b := newFakeLoop(&g), newFakeLoop(&g)
	g.Add(a)
	g.Add(b)
	served := make(chan error, 1)
	go func() { served <- g.Serve() }()
	<-a.running // Shutdown while serving, not before
	<-b.running
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if a.released.Load() != 1 || b.released.Load() != 1 || stopped == 0 {
		t.Errorf("released %d/%d, onStop %d", a.released.Load(), b.released.Load(), stopped)
	}
	if err := g.Serve(); err == nil {
		t.Error("Serve after Shutdown: want an error (called twice)")
	}
}

func TestLoopGroupFailureStopsTheOthers(t *testing.T) {
	var g LoopGroup
	g.Init("test", nil, nil)
	bad, good := newFakeLoop(&g), newFakeLoop(&g)
	bad.err = errors.New("boom")
	g.Add(good)
	g.Add(bad)
	err := g.Serve()
	if err == nil || err.Error() != "reactor 1: boom" || !g.Forced() {
		t.Fatalf("Serve = %v (forced %v), want reactor 1's error and the others forced", err, g.Forced())
	}
}

func TestLoopGroupShutdownDeadline(t *testing.T) {
	var g LoopGroup
	g.Init("test", nil, nil)
	l := newFakeLoop(&g)
	l.stubborn = true // drains until forced
	g.Add(l)
	served := make(chan error, 1)
	go func() { served <- g.Serve() }()
	<-l.running
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the context's error", err)
	}
	<-served
	if !g.Forced() {
		t.Error("not forced after the deadline")
	}
}

func TestLoopGroupShutdownBeforeServe(t *testing.T) {
	var g LoopGroup
	g.Init("test", nil, nil)
	l := newFakeLoop(&g)
	g.Add(l)
	if err := g.Shutdown(context.Background()); err != nil || l.released.Load() != 1 {
		t.Fatalf("Shutdown before Serve: %v, released %d", err, l.released.Load())
	}
	if err := g.Serve(); err != nil {
		t.Fatalf("Serve after Shutdown: %v, want nil", err)
	}
}
