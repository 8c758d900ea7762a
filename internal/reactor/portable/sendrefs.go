package portable

import (
	"net"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// Large values by reference (protocol/byref.go): on a plain connection a
// reply's values of 16 KiB and more go from the store's memory straight to
// the socket, each in its place, with one writev (net.Buffers), as on the
// raw engines, instead of being copied into the reply first. Over TLS they
// are copied as before: every piece would become a TLS record of its own,
// and the record layer copies the bytes to encrypt them anyway (as
// memcached's TLS writes copy theirs).

// sendRefs asks the Session for its large values by reference when the
// connection is plain.
func (c *conn) sendRefs() {
	c.refs = nil
	if rs, ok := c.sess.(reactor.RefSender); ok && c.tls == nil {
		rs.SendRefs()
		c.refs = rs
	}
}

// takeRefs takes the values the last Process call left by reference; nil
// when none.
func (c *conn) takeRefs() []protocol.RefSeg {
	if c.refs == nil {
		return nil
	}
	return c.refs.TakeRefs()
}

// refWriteMost bounds one write of writeRefs: a reply of many large
// values goes out in writes of at most this many bytes, each counted in
// bytes_written when it returns, as the copied path's pieces are, instead
// of one write that blocks on a slow reader until megabytes are through.
const refWriteMost = 256 << 10

// writeRefs writes out with the values of refs in their places, then
// tells the Session they are written (RefSent), which releases their pins,
// whether the write succeeded or not. It reports whether it did.
func (c *conn) writeRefs(out []byte, refs []protocol.RefSeg) bool {
	defer c.refs.RefSent()
	var pieces [2*protocol.MaxRefs + 1][]byte
	n, off := 0, 0
	for _, seg := range refs {
		if seg.At > off {
			pieces[n], n, off = out[off:seg.At], n+1, seg.At
		}
		pieces[n], n = seg.Value, n+1
	}
	if off < len(out) {
		pieces[n], n = out[off:], n+1
	}
	c.setState(reactor.StateWriting)
	defer c.setState(reactor.StateParsing)
	rest := pieces[:n]
	for len(rest) > 0 {
		// One writev of the pieces that fit in refWriteMost, or of the
		// first refWriteMost bytes of a larger one.
		var batch net.Buffers
		size := 0
		for len(rest) > 0 && size < refWriteMost {
			p := rest[0]
			if take := refWriteMost - size; len(p) > take {
				batch, rest[0] = append(batch, p[:take]), p[take:]
				size += take
				break
			}
			batch, rest, size = append(batch, p), rest[1:], size+len(p)
		}
		w, err := batch.WriteTo(c.rw)
		c.bytesWritten.Add(uint64(w))
		if err != nil {
			c.e.log.Debug("write failed", "remote", c.nc.RemoteAddr(), "err", err)
			return false
		}
	}
	return true
}
