package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Loop is one reactor of an engine that runs its own event loops on locked
// OS threads (epoll, uring).
type Loop interface {
	// Run is the loop. It returns once the group is Quitting and its
	// connections are done (or at once when Forced), or with a fatal error.
	Run() error
	// Wake makes a Run blocked in the kernel look at the group's state.
	Wake()
	// Release frees the loop's descriptors after Run returned or when it
	// never ran.
	Release()
}

// LoopGroup is the lifecycle those engines share: Serve runs every loop,
// a fatal error in one stops the others, Shutdown drains, or cuts short
// when its context ends. The zero value is not ready: use Init.
type LoopGroup struct {
	name   string // "epoll", "uring": in errors and logs
	loops  []Loop
	onStop func()

	quitting  atomic.Bool // Shutdown called: stop accepting, drain
	force     atomic.Bool // Shutdown's context expired, or a loop failed: close now
	stateMu   sync.Mutex
	state     groupState
	done      chan struct{} // closed when every loop has exited (or Serve never will run)
	closeOnce sync.Once
	errMu     sync.Mutex
	err       error // first fatal loop error

	acceptLog EverySecond
}

type groupState uint8

const (
	groupIdle    groupState = iota // built, Serve not called
	groupServing                   // Serve running
	groupClosed                    // shut down before Serve ran
)

// Init readies the group for loops; onStop runs whenever stopping begins
// (e.g. Accounting.StopAccepting).
func (g *LoopGroup) Init(name string, loops []Loop, onStop func()) {
	g.name, g.loops, g.onStop = name, loops, onStop
	g.done = make(chan struct{})
}

// Add appends a loop; only before Serve or Shutdown.
func (g *LoopGroup) Add(l Loop) { g.loops = append(g.loops, l) }

// Quitting reports whether Shutdown began: stop accepting, drain.
func (g *LoopGroup) Quitting() bool { return g.quitting.Load() }

// Forced reports whether connections must be closed now.
func (g *LoopGroup) Forced() bool { return g.force.Load() }

// Serve runs the loops until Shutdown, returning the first fatal error.
func (g *LoopGroup) Serve() error {
	g.stateMu.Lock()
	switch g.state {
	case groupServing:
		g.stateMu.Unlock()
		return errors.New(g.name + ": Serve called twice")
	case groupClosed:
		g.stateMu.Unlock()
		return nil // Shutdown came first
	}
	g.state = groupServing
	g.stateMu.Unlock()
	// A loop asleep in the kernel keeps its P (the runtime only takes it
	// back after sysmon notices, or never for a raw system call), so with
	// every P held by a loop the rest of the program (timers, signals, the
	// store's background work) would wait for one. A P per loop on top of
	// the program's leaves the rest as many as it had; sleeping loops use
	// no CPU.
	prev := runtime.GOMAXPROCS(0)
	ours := prev + len(g.loops)
	runtime.GOMAXPROCS(ours)
	defer func() {
		if runtime.GOMAXPROCS(0) == ours {
			runtime.GOMAXPROCS(prev)
		}
	}()
	var wg sync.WaitGroup
	for i, l := range g.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Run(); err != nil {
				g.fail(fmt.Errorf("reactor %d: %w", i, err))
			}
		}()
	}
	wg.Wait()
	g.closeAll()
	close(g.done)
	g.errMu.Lock()
	defer g.errMu.Unlock()
	return g.err
}

// fail records a fatal loop error and stops the others.
func (g *LoopGroup) fail(err error) {
	g.errMu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.errMu.Unlock()
	g.force.Store(true)
	g.stop()
}

func (g *LoopGroup) stop() {
	g.quitting.Store(true)
	if g.onStop != nil {
		g.onStop()
	}
	for _, l := range g.loops {
		l.Wake()
	}
}

// Shutdown stops accepting, lets every connection's pending replies go out,
// closes the connections and waits for Serve to return. When ctx ends first
// the remaining connections are closed at once and ctx's error is returned.
func (g *LoopGroup) Shutdown(ctx context.Context) error {
	g.stop()
	g.stateMu.Lock()
	if g.state == groupIdle { // Serve never ran: nothing to drain
		g.state = groupClosed
		g.stateMu.Unlock()
		g.closeAll()
		close(g.done)
		return nil
	}
	g.stateMu.Unlock()
	select {
	case <-g.done:
		return nil
	case <-ctx.Done():
		g.force.Store(true)
		g.stop()
		select {
		case <-g.done:
		case <-time.After(5 * time.Second):
		}
		return ctx.Err()
	}
}

// CloseAll releases every loop's descriptors (the loops have exited or
// never ran); it runs once.
func (g *LoopGroup) CloseAll() { g.closeAll() }

func (g *LoopGroup) closeAll() {
	g.closeOnce.Do(func() {
		for _, l := range g.loops {
			l.Release()
		}
	})
}

// LogAcceptError logs accept failures at most once a second.
func (g *LoopGroup) LogAcceptError(err error) {
	if g.acceptLog.Allow() {
		slog.Warn(g.name+": accept failed", "err", err)
	}
}
