//go:build linux

package uring

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// router gives each NAPI ID one reactor, so each ring busy-polls the one
// NAPI all its sockets arrive on. The first reactor that sees an unowned ID
// and owns none takes it, else the first reactor still without one; with
// every reactor owning an ID, new IDs stay where they were accepted. It is
// asked once per accepted connection, never per request. (The epoll
// engine's router follows the same rule; sharing it needs it moved out of
// that package.)
type router struct {
	mu    sync.Mutex
	owner map[uint32]int
	ids   []*atomic.Uint32 // ids[i]: reactor i's NAPI ID, 0 while unknown
}

func newRouter(ids []*atomic.Uint32) *router {
	return &router{owner: make(map[uint32]int), ids: ids}
}

// route returns the reactor for a connection of NAPI id accepted by self.
func (rt *router) route(self int, id uint32) int {
	if id == 0 {
		return self // loopback or unknown: no NAPI to poll
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if r, ok := rt.owner[id]; ok {
		return r
	}
	target := -1
	if rt.ids[self].Load() == 0 {
		target = self
	} else {
		for i, v := range rt.ids {
			if v.Load() == 0 {
				target = i
				break
			}
		}
	}
	if target < 0 {
		return self
	}
	rt.owner[id] = target
	rt.ids[target].Store(id)
	return target
}

// handoff is an accepted connection on its way to the reactor of its NAPI.
type handoff struct {
	fd       int
	napiID   uint32
	listener int
}

// mailbox is a reactor's inbox: handoffs plus an eventfd the reactor's
// ring polls (multishot), which wakes it from io_uring_enter. Acceptors
// (once per connection) and Shutdown use it, never the request path.
type mailbox struct {
	efd   int
	mu    sync.Mutex
	queue []handoff
}

func newMailbox() (*mailbox, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &mailbox{efd: efd}, nil
}

func (m *mailbox) post(h handoff) {
	m.mu.Lock()
	m.queue = append(m.queue, h)
	m.wakeLocked()
	m.mu.Unlock()
}

// wake makes the owner's io_uring_enter return; safe after close.
func (m *mailbox) wake() {
	m.mu.Lock()
	m.wakeLocked()
	m.mu.Unlock()
}

func (m *mailbox) wakeLocked() {
	if m.efd < 0 {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(m.efd, one[:]) // EAGAIN: already nonzero, the owner wakes anyway
}

// take clears the wakeup and moves the queued handoffs into dst.
func (m *mailbox) take(dst []handoff) []handoff {
	var buf [8]byte
	m.mu.Lock()
	if m.efd >= 0 {
		_, _ = unix.Read(m.efd, buf[:])
	}
	dst = append(dst, m.queue...)
	clear(m.queue)
	m.queue = m.queue[:0]
	m.mu.Unlock()
	return dst
}

func (m *mailbox) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.efd >= 0 {
		unix.Close(m.efd)
		m.efd = -1
	}
}
