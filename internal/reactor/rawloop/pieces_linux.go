//go:build linux

package rawloop

import (
	"github.com/gocached/gocached/internal/protocol"
	"golang.org/x/sys/unix"
)

// A reply whose large values stay in the store's memory (Conn.Refs) goes
// out in pieces: the reply's bytes up to a value, the value, and so on.
// Both raw engines lay it out with Iovecs for one writev or sendmsg and
// account for what the kernel took with Wrote.

// MaxPieces is the most pieces Iovecs lays out: each value sent from the
// store and the bytes before it, and the bytes after the last.
const MaxPieces = 2*protocol.MaxRefs + 1

// Iovecs fills iov with what is left to write of buf from off on, the
// values of c.Refs (which refer to buf) in their places, and returns how
// many entries it filled. Empty pieces get no entry.
func (c *Conn[E]) Iovecs(iov *[MaxPieces]unix.Iovec, buf []byte, off int) int {
	n := 0
	add := func(b []byte) {
		if len(b) > 0 {
			iov[n] = unix.Iovec{Base: &b[0]}
			iov[n].SetLen(len(b))
			n++
		}
	}
	for i, seg := range c.Refs {
		if seg.At > off {
			add(buf[off:seg.At])
			off = seg.At
		}
		v := seg.Value
		if i == 0 {
			v = v[c.RefDone:]
		}
		add(v)
	}
	add(buf[off:])
	return n
}

// Wrote records that n more bytes of what Iovecs laid out were written,
// advancing *off in buf and c.Refs. Once every value is written the
// Session is told (RefSent) and has its turn again.
func (c *Conn[E]) Wrote(buf []byte, off *int, n int) {
	for n > 0 {
		if len(c.Refs) > 0 && *off == c.Refs[0].At {
			v := c.Refs[0].Value
			k := min(n, len(v)-c.RefDone)
			c.RefDone, c.RefLeft, n = c.RefDone+k, c.RefLeft-k, n-k
			if c.RefDone == len(v) {
				c.Refs, c.RefDone = c.Refs[1:], 0
			}
			continue
		}
		end := len(buf)
		if len(c.Refs) > 0 {
			end = c.Refs[0].At
		}
		k := min(n, end-*off)
		if k <= 0 {
			break // more written than was laid out: the kernel's count is wrong
		}
		*off, n = *off+k, n-k
	}
	if c.Refs == nil || len(c.Refs) > 0 {
		return
	}
	c.Refs = nil
	c.refs.RefSent()
	// The turn that left the values, and whatever it left buffered or
	// pending, go on.
	c.More = c.More || c.Sess.Pending() || len(c.In) > 0
}
