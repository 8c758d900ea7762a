// Package floor is what enginecmp's floor servers (bench/cmd/epollfloor,
// bench/cmd/uringfloor) share: the least user-space work a memcached
// text-protocol server can do, and their common start-up. Every "get KEY"
// is a hit of a fixed 100-byte value, every "set" is STORED, nothing is
// kept. Not a cache: never use it for anything else.
package floor

import (
	"bytes"
	"strconv"
)

// Requests is one client's unparsed input and how many bytes of a set's
// data are still to be skipped.
type Requests struct {
	in   []byte
	skip int
}

var value = bytes.Repeat([]byte{'x'}, 100)

// Answer appends the replies to every whole request in p (after what r
// kept from the last read) to out and keeps the rest.
func (r *Requests) Answer(p []byte, out []byte) []byte {
	if len(r.in) > 0 {
		r.in = append(r.in, p...)
		p = r.in
	}
	for len(p) > 0 {
		if r.skip > 0 {
			k := min(r.skip, len(p))
			r.skip -= k
			p = p[k:]
			continue
		}
		eol := bytes.IndexByte(p, '\n')
		if eol < 0 {
			break
		}
		line := bytes.TrimSuffix(p[:eol], []byte{'\r'})
		p = p[eol+1:]
		switch {
		case bytes.HasPrefix(line, []byte("get ")):
			out = append(out, "VALUE "...)
			out = append(out, line[4:]...)
			out = append(out, " 0 100\r\n"...)
			out = append(out, value...)
			out = append(out, "\r\nEND\r\n"...)
		case bytes.HasPrefix(line, []byte("set ")):
			f := bytes.Fields(line)
			size := 0
			if len(f) >= 5 {
				size, _ = strconv.Atoi(string(f[4]))
			}
			r.skip = size + 2
			out = append(out, "STORED\r\n"...)
		default:
			out = append(out, "ERROR\r\n"...)
		}
	}
	r.in = append(r.in[:0], p...)
	return out
}
