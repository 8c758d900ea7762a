package flash

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gocached/gocached/bench"
)

// LoadResult is what the write phase did.
type LoadResult struct {
	Stored  int64   `json:"stored"`
	Refused int64   `json:"refused"` // sets answered with anything but STORED
	Bytes   int64   `json:"bytes"`   // value bytes sent
	Seconds float64 `json:"seconds"`
}

// loadBatch is the sets pipelined before their replies are read.
const loadBatch = 32

// writeAll sets every record once, in order, with the value size sizes[i],
// over one connection at no more than bytesPerSec value bytes a second
// (0 = unpaced): a flash tier is written by a background thread, and a
// load faster than it drains makes the server evict instead of writing,
// which would measure the load's speed rather than the tier. Bounded by
// deadline.
func writeAll(ctx context.Context, addr string, ks *bench.KeySpace, sizes []int, bytesPerSec float64, deadline time.Time) (LoadResult, error) {
	var res LoadResult
	start := time.Now()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	var wbuf []byte
	rbuf := make([]byte, 0, 64<<10)
	for i := 0; i < len(sizes); {
		wbuf = wbuf[:0]
		batch := min(loadBatch, len(sizes)-i)
		for j := range batch {
			wbuf = bench.AppendSet(wbuf, ks, i+j, sizes[i+j])
			res.Bytes += int64(sizes[i+j])
		}
		if _, err := nc.Write(wbuf); err != nil {
			return res, fmt.Errorf("load: write: %w", err)
		}
		for got := 0; got < batch; {
			kind, m, perr := bench.ParseReply(rbuf)
			if perr != nil {
				return res, fmt.Errorf("load: %w", perr)
			}
			if m == 0 {
				n, err := nc.Read(rbuf[len(rbuf):cap(rbuf)])
				rbuf = rbuf[:len(rbuf)+n]
				if err != nil && n == 0 {
					return res, fmt.Errorf("load: read after %d of %d sets: %w", i+got, len(sizes), err)
				}
				continue
			}
			rbuf = rbuf[:copy(rbuf, rbuf[m:])]
			if kind == bench.ReplyStored {
				res.Stored++
			} else {
				res.Refused++
			}
			got++
		}
		i += batch
		if bytesPerSec > 0 {
			due := start.Add(time.Duration(float64(res.Bytes) / bytesPerSec * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				if err := bench.SleepCtx(ctx, d); err != nil {
					return res, err
				}
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
