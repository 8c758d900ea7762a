//go:build linux

package epoll

import (
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// handoff is an accepted connection on its way to the reactor that owns its
// NAPI ID.
type handoff struct {
	fd       int
	napiID   uint32
	listener int // index of the accepting listener, for `stats conns`
}

// mailbox is a reactor's inbox: handed-off connections plus an eventfd that
// wakes the reactor out of epoll_wait. Only acceptors (once per connection)
// and Shutdown touch it, so its mutex is never on the per-request path.
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

// post queues h and wakes the owner.
func (m *mailbox) post(h handoff) {
	m.mu.Lock()
	m.queue = append(m.queue, h)
	m.wakeLocked()
	m.mu.Unlock()
}

// wake makes the owner's epoll_wait return. It is safe after close.
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
	// EAGAIN means the counter is already nonzero: the owner wakes anyway.
	_, _ = unix.Write(m.efd, one[:])
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

// close releases the eventfd; the owner drains the queue first.
func (m *mailbox) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.efd >= 0 {
		unix.Close(m.efd)
		m.efd = -1
	}
}
