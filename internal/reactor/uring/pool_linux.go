//go:build linux

package uring

import "github.com/gocached/gocached/internal/reactor"

// poolDepth bounds the buffers and Sessions a reactor keeps for reuse.
const poolDepth = 64

func (r *loop) getRbuf() []byte {
	if n := len(r.rbufs); n > 0 {
		b := r.rbufs[n-1]
		r.rbufs = r.rbufs[:n-1]
		return b
	}
	return make([]byte, 0, reactor.ReadBufSize)
}

// putRbuf keeps standard-size read buffers; grown ones go to the GC, which
// is how a buffer enlarged for one big value shrinks back.
func (r *loop) putRbuf(b []byte) {
	if cap(b) == reactor.ReadBufSize && len(r.rbufs) < poolDepth {
		r.rbufs = append(r.rbufs, b[:0])
	}
}

func (r *loop) getWbuf() []byte {
	if n := len(r.wbufs); n > 0 {
		b := r.wbufs[n-1]
		r.wbufs = r.wbufs[:n-1]
		return b
	}
	return make([]byte, 0, reactor.ReadBufSize)
}

// putWbuf keeps reply buffers up to reactor.KeepBufMax. Only buffers no
// send is reading from come here.
func (r *loop) putWbuf(b []byte) {
	if b != nil && cap(b) <= reactor.KeepBufMax && len(r.wbufs) < poolDepth {
		r.wbufs = append(r.wbufs, b[:0])
	}
}

func (r *loop) getSession() reactor.Session {
	if n := len(r.sessions); n > 0 {
		s := r.sessions[n-1]
		r.sessions = r.sessions[:n-1]
		return s
	}
	return r.eng.cfg.NewSession()
}
