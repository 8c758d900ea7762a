//go:build linux

package uring

import (
	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// onAccept handles one completion of listener li's multishot accept: a new
// connection, or the end of the accept (cancelled, or failed).
func (r *loop) onAccept(li int, q *uringsys.CQE) {
	if q.Flags&uringsys.CQEFMore == 0 {
		if ls := r.Listeners(); li < len(ls) && ls[li].Armed {
			ls[li].Armed = false
			r.liveAccepts--
		}
		if q.Res < 0 && q.Res != -int32(unix.ECANCELED) && !r.Draining {
			// EMFILE, ENFILE, ENOBUFS...: re-arming at once would fail
			// again at once; pause instead.
			r.eng.LogAcceptError(unix.Errno(-q.Res))
			r.pauseAccept()
		} else if _, paused := r.AcceptPauseLeft(); !r.Draining && !paused {
			r.armAccept(li) // ended without error (e.g. CQ overflow): keep accepting
		}
	}
	if q.Res < 0 {
		return
	}
	fd := int(q.Res)
	if r.Draining {
		unix.Close(fd) // raced with the cancel: never admitted
		return
	}
	// The -s listener's connections are dealt out in turn, TCP's follow
	// their NAPI (reactor.Router). With -s it is the only listener.
	r.Accepted(fd, li, r.eng.cfg.UnixSocket != "")
}

// pauseAccept stops re-arming accepts for a while (rawloop.Loop.PauseAccept).
func (r *loop) pauseAccept() { r.PauseAccept() }

// resumeAccept re-arms the listeners once a pause is over.
func (r *loop) resumeAccept() {
	if !r.ResumeAccept() {
		return
	}
	for i := range r.Listeners() {
		r.armAccept(i)
	}
}

// acceptBacklog takes the connections still queued on r's listeners when
// it starts draining, so that they are closed like every other client
// (EOF after the replies) instead of being reset with the listener. The
// handshake completed before Shutdown, so to the client they were
// connected. Bounded per listener.
func (r *loop) acceptBacklog() {
	for i, l := range r.Listeners() {
		fd := l.FD
		for range acceptBacklogMax {
			if fd < 0 {
				break
			}
			nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
			if err != nil {
				break // EAGAIN: empty
			}
			if !r.eng.Acct.Admit() {
				unix.Close(nfd)
				continue
			}
			r.AddConn(nfd, 0, i) // draining: closed once nothing is pending
		}
	}
}

// acceptBacklogMax bounds the connections one listener hands over at drain.
const acceptBacklogMax = 1024
