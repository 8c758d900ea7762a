//go:build linux

package reactor

import (
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Handoff is an accepted connection on its way to the reactor that owns its
// NAPI ID.
type Handoff struct {
	FD       int
	NAPIID   uint32
	Listener int // index of the accepting listener, for `stats conns`
}

// Mailbox is a reactor's inbox: handed-off connections, wakeups for its
// connections (a `watch` stream with new lines), and an eventfd that wakes
// the reactor out of its wait. Acceptors (once per connection), watchers'
// wakeups and Shutdown touch it, so its mutex is never on the per-request
// path.
type Mailbox struct {
	efd   int
	mu    sync.Mutex
	queue []Handoff
	wakes []uint64
}

func NewMailbox() (*Mailbox, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &Mailbox{efd: efd}, nil
}

// Post queues h and wakes the owner.
func (m *Mailbox) Post(h Handoff) {
	m.mu.Lock()
	m.queue = append(m.queue, h)
	m.wakeLocked()
	m.mu.Unlock()
}

// PostWake queues a wakeup for the owner's connection in table slot slot,
// generation gen (which tells it from a later connection in the same slot),
// and wakes the owner. It only signals, so it is safe to call with a store
// shard locked.
func (m *Mailbox) PostWake(slot int32, gen uint32) {
	m.mu.Lock()
	m.wakes = append(m.wakes, uint64(uint32(slot))<<32|uint64(gen))
	m.wakeLocked()
	m.mu.Unlock()
}

// TakeWakes moves the queued connection wakeups into dst (see WakeConn).
// Call it after Take, which clears the eventfd: a wakeup posted in between
// sets it again.
func (m *Mailbox) TakeWakes(dst []uint64) []uint64 {
	m.mu.Lock()
	dst = append(dst, m.wakes...)
	m.wakes = m.wakes[:0]
	m.mu.Unlock()
	return dst
}

// Wake makes the owner's wait (epoll_wait, io_uring_enter) return. It is safe after close.
func (m *Mailbox) Wake() {
	m.mu.Lock()
	m.wakeLocked()
	m.mu.Unlock()
}

func (m *Mailbox) wakeLocked() {
	if m.efd < 0 {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	// EAGAIN means the counter is already nonzero: the owner wakes anyway.
	_, _ = unix.Write(m.efd, one[:])
}

// Take clears the wakeup and moves the queued handoffs into dst.
func (m *Mailbox) Take(dst []Handoff) []Handoff {
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

// EventFD is the descriptor the owner watches (epoll or a poll on its ring)
// to learn that Wake was called.
func (m *Mailbox) EventFD() int { return m.efd }

// Close releases the eventfd; the owner drains the queue first.
func (m *Mailbox) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.efd >= 0 {
		unix.Close(m.efd)
		m.efd = -1
	}
}

// DeliverWakes takes the queued connection wakeups (after Take) and calls
// wake for each connection still in its slot with the generation the
// wakeup named; conns is the owner's table by slot, gen reads a
// connection's generation. buf is reused scratch, returned for next time.
func DeliverWakes[C any](m *Mailbox, buf []uint64, conns []*C, gen func(*C) uint32, wake func(*C)) []uint64 {
	buf = m.TakeWakes(buf[:0])
	for _, token := range buf {
		slot, g := int(token>>32), uint32(token)
		if slot < len(conns) && conns[slot] != nil && gen(conns[slot]) == g {
			wake(conns[slot])
		}
	}
	return buf
}
