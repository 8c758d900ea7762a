package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ReplyKind classifies one server reply to a get or a set.
type ReplyKind uint8

const (
	ReplyHit         ReplyKind = iota + 1 // VALUE ... END
	ReplyMiss                             // END
	ReplyStored                           // STORED
	ReplyNotStored                        // NOT_STORED, EXISTS, NOT_FOUND
	ReplyError                            // ERROR
	ReplyClientError                      // CLIENT_ERROR ...
	ReplyServerError                      // SERVER_ERROR ...
)

func (k ReplyKind) String() string {
	switch k {
	case ReplyHit:
		return "hit"
	case ReplyMiss:
		return "miss"
	case ReplyStored:
		return "stored"
	case ReplyNotStored:
		return "not-stored"
	case ReplyError:
		return "error"
	case ReplyClientError:
		return "client-error"
	case ReplyServerError:
		return "server-error"
	}
	return "reply(" + strconv.Itoa(int(k)) + ")"
}

// IsError reports whether the reply means the request failed.
func (k ReplyKind) IsError() bool { return k >= ReplyNotStored }

// maxReplyLine bounds a reply line; a longer one means a broken stream.
const maxReplyLine = 4096

// ErrMalformedReply means the byte stream is not memcached replies; the
// connection cannot be resynchronised.
var ErrMalformedReply = errors.New("malformed reply")

// ParseReply parses the first reply to a single-key get or a set in b. It
// returns the reply's kind and its length, or n == 0 when b does not hold a
// whole reply yet.
func ParseReply(b []byte) (kind ReplyKind, n int, err error) {
	eol := bytes.Index(b, crlf)
	if eol < 0 {
		if len(b) > maxReplyLine {
			return 0, 0, fmt.Errorf("%w: no line end in %d bytes", ErrMalformedReply, len(b))
		}
		return 0, 0, nil
	}
	line := b[:eol]
	n = eol + 2
	switch {
	case bytes.Equal(line, []byte("END")):
		return ReplyMiss, n, nil
	case bytes.Equal(line, []byte("STORED")):
		return ReplyStored, n, nil
	case bytes.Equal(line, []byte("NOT_STORED")), bytes.Equal(line, []byte("EXISTS")), bytes.Equal(line, []byte("NOT_FOUND")):
		return ReplyNotStored, n, nil
	case bytes.Equal(line, []byte("ERROR")):
		return ReplyError, n, nil
	case bytes.HasPrefix(line, []byte("CLIENT_ERROR")):
		return ReplyClientError, n, nil
	case bytes.HasPrefix(line, []byte("SERVER_ERROR")):
		return ReplyServerError, n, nil
	case bytes.HasPrefix(line, []byte("VALUE ")):
		return parseValue(b, line, n)
	}
	return 0, 0, fmt.Errorf("%w: %q", ErrMalformedReply, truncate(line, 64))
}

var crlf = []byte("\r\n")

// parseValue parses "VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n",
// repeated for a multiget, then "END\r\n". A reply with any value is a hit.
func parseValue(b, line []byte, n int) (ReplyKind, int, error) {
	for {
		end, err := valueEnd(b, line, n)
		if err != nil || end == 0 {
			return 0, 0, err
		}
		const trailer = "END\r\n"
		if len(b) < end+len(trailer) {
			// Fewer bytes than "END\r\n": fine while they may still become
			// END or the next VALUE.
			if tail := b[end:]; !strings.HasPrefix(trailer, string(tail)) && !strings.HasPrefix("VALUE ", string(tail)) {
				return 0, 0, fmt.Errorf("%w: value followed by %q, not END", ErrMalformedReply, tail)
			}
			return 0, 0, nil
		}
		if string(b[end:end+len(trailer)]) == trailer {
			return ReplyHit, end + len(trailer), nil
		}
		eol := bytes.Index(b[end:], crlf)
		if eol < 0 {
			if len(b)-end > maxReplyLine {
				return 0, 0, fmt.Errorf("%w: no line end in %d bytes", ErrMalformedReply, len(b)-end)
			}
			return 0, 0, nil
		}
		line = b[end : end+eol]
		if !bytes.HasPrefix(line, []byte("VALUE ")) {
			return 0, 0, fmt.Errorf("%w: value followed by %q, not END", ErrMalformedReply, truncate(line, 64))
		}
		n = end + eol + 2
	}
}

// valueEnd checks one "VALUE" line (line, ending at n) and returns where
// the bytes after its data block's CRLF start, 0 when b is too short yet.
func valueEnd(b, line []byte, n int) (int, error) {
	var fields [6][]byte
	nf := splitFields(line, fields[:])
	if nf != 4 && nf != 5 {
		return 0, fmt.Errorf("%w: %q", ErrMalformedReply, truncate(line, 64))
	}
	if _, ok := parseDecimal(fields[2], 1<<32-1); !ok {
		return 0, fmt.Errorf("%w: flags in %q", ErrMalformedReply, truncate(line, 64))
	}
	size, ok := parseDecimal(fields[3], 1<<31-1)
	if !ok {
		return 0, fmt.Errorf("%w: length in %q", ErrMalformedReply, truncate(line, 64))
	}
	end := n + int(size)
	if len(b) < end+2 {
		return 0, nil
	}
	if !bytes.Equal(b[end:end+2], crlf) {
		return 0, fmt.Errorf("%w: value of %d bytes not followed by CRLF", ErrMalformedReply, size)
	}
	return end + 2, nil
}

// splitFields splits line at single spaces into out and returns how many
// fields it found (len(out)+1 when there are more than out can hold).
func splitFields(line []byte, out [][]byte) int {
	n := 0
	for len(line) > 0 {
		i := bytes.IndexByte(line, ' ')
		field := line
		if i >= 0 {
			field, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		if len(field) == 0 {
			continue
		}
		if n == len(out) {
			return n + 1
		}
		out[n] = field
		n++
	}
	return n
}

// parseDecimal parses an unsigned decimal no larger than limit without allocating.
func parseDecimal(b []byte, limit uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		if v > limit {
			return 0, false
		}
	}
	return v, true
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
