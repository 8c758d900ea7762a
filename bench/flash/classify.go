package flash

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/internal/testproc"
)

// Where a record's value is, as the server says before the measured phase.
type Where uint8

const (
	Missing Where = iota // not in the cache
	InRAM                // the whole item is in memory
	OnFlash              // memory holds a header; the value is in an ext_path file
	numWhere
)

func (w Where) String() string {
	return [...]string{"missing", "ram", "flash"}[w]
}

// classify asks `me KEY` (meta debug, which does not bump the item) for
// every record. Its size= cannot tell a flash item from a RAM one (memcached
// keeps the value's length in the header item), but its cls= can: a header
// is a few dozen bytes and sits in a slab class whose chunks are smaller
// than any value written (minValue), a whole item in a class that holds
// its value. Chunk sizes come from `stats slabs`.
func classify(ctx context.Context, addr string, ks *bench.KeySpace, minValue int, deadline time.Time) ([]Where, map[int]bool, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReaderSize(nc, 64<<10)
	header, err := readHeaderClasses(nc, r, minValue)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Where, ks.Records())
	var wbuf []byte
	const batch = 256
	for i := 0; i < len(out); i += batch {
		n := min(batch, len(out)-i)
		wbuf = wbuf[:0]
		for j := range n {
			wbuf = append(wbuf, "me "...)
			wbuf = ks.AppendKey(wbuf, i+j)
			wbuf = append(wbuf, "\r\n"...)
		}
		if _, err := nc.Write(wbuf); err != nil {
			return nil, nil, fmt.Errorf("classify: %w", err)
		}
		for j := range n {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return nil, nil, fmt.Errorf("classify: %w", err)
			}
			w, err := parseMetaDebug(line, header)
			if err != nil {
				return nil, nil, err
			}
			out[i+j] = w
		}
	}
	return out, header, nil
}

// readHeaderClasses reads `stats slabs` and picks the classes too small
// for a value.
func readHeaderClasses(nc net.Conn, r *bufio.Reader, minValue int) (map[int]bool, error) {
	if _, err := nc.Write([]byte("stats slabs\r\n")); err != nil {
		return nil, fmt.Errorf("stats slabs: %w", err)
	}
	_, slabs, err := testproc.ReadStats(r)
	if err != nil {
		return nil, fmt.Errorf("stats slabs: %w", err)
	}
	return headerClasses(Stats(slabs), minValue), nil
}

// headerClasses is the set of slab classes whose chunks are smaller than
// minValue: an item there cannot hold one of the workload's values.
func headerClasses(slabs Stats, minValue int) map[int]bool {
	out := map[int]bool{}
	for name := range slabs {
		cls, field, ok := strings.Cut(name, ":")
		if !ok || field != "chunk_size" {
			continue
		}
		id, err1 := strconv.Atoi(cls)
		size, ok := slabs.Int(name)
		if err1 == nil && ok && size < int64(minValue) {
			out[id] = true
		}
	}
	return out
}

// parseMetaDebug reads one reply to `me`: "EN" or "ME key ... cls=N ...".
func parseMetaDebug(line []byte, header map[int]bool) (Where, error) {
	line = bytes.TrimRight(line, "\r\n")
	if string(line) == "EN" {
		return Missing, nil
	}
	if !bytes.HasPrefix(line, []byte("ME ")) {
		return Missing, fmt.Errorf("classify: reply %q to me", line)
	}
	for _, f := range bytes.Fields(line) {
		if v, ok := bytes.CutPrefix(f, []byte("cls=")); ok {
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return Missing, fmt.Errorf("classify: %q: %w", line, err)
			}
			if header[n] {
				return OnFlash, nil
			}
			return InRAM, nil
		}
	}
	return Missing, fmt.Errorf("classify: no cls in %q", line)
}

// Census counts records by where they are.
type Census [numWhere]int

func census(ws []Where) Census {
	var c Census
	for _, w := range ws {
		c[w]++
	}
	return c
}
