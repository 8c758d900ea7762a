//go:build linux

package rawloop

import "golang.org/x/sys/unix"

// Listener is one of a loop's listening sockets.
type Listener struct {
	FD    int  // -1 once closed, or held closed: another loop accepts for the address
	Group int  // the bound address, an index into Group.Labels
	Armed bool // its multishot accept is in flight (completion engines)
}

// AddListener gives fd, a socket bound to address group, to l, which owns
// it from here on; it returns the listener's index.
func (l *Loop[E]) AddListener(fd, group int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, Listener{FD: fd, Group: group})
	return len(l.listeners) - 1
}

// Listeners are l's listeners by index (loop goroutine only; FD changes
// only in CloseListeners).
func (l *Loop[E]) Listeners() []Listener { return l.listeners }

// listenerFD is l's descriptor of the address group's listener, -1 once
// closed.
func (l *Loop[E]) listenerFD(group int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.listeners {
		if ln := &l.listeners[i]; ln.Group == group {
			return ln.FD
		}
	}
	return -1
}

// CloseListeners closes l's listening sockets, calling ending (when set)
// first for each, so an engine can end what the kernel does with it. Under
// mu, like every close the stats reader could otherwise observe.
func (l *Loop[E]) CloseListeners(ending func(i int, ln *Listener)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.listeners {
		ln := &l.listeners[i]
		if ending != nil {
			ending(i, ln)
		}
		if ln.FD >= 0 {
			unix.Close(ln.FD)
			ln.FD = -1
		}
	}
}
