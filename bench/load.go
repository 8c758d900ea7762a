package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// LoadResult describes the preload phase.
type LoadResult struct {
	Records int     `json:"records"`
	Seconds float64 `json:"seconds"`
	Errors  int64   `json:"errors"` // sets the server refused
}

// maxLoadConns bounds the connections the preload opens.
const maxLoadConns = 8

// preload sets every record once, in pipelined batches over a few
// connections, each owning a contiguous range of keys.
func preload(ctx context.Context, cfg *Config, ks *KeySpace) (LoadResult, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.LoadTimeout)
	defer cancel()
	n := min(cfg.conns(), maxLoadConns, ks.Records())
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errors int64
		first  error
	)
	for j := range n {
		lo, hi := j*ks.Records()/n, (j+1)*ks.Records()/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused, err := loadRange(ctx, cfg, ks, lo, hi, rand.New(rand.NewPCG(cfg.Seed, 1<<32+uint64(j))))
			mu.Lock()
			defer mu.Unlock()
			errors += refused
			if err != nil && first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	res := LoadResult{Records: ks.Records(), Seconds: time.Since(start).Seconds(), Errors: errors}
	if first != nil {
		return res, fmt.Errorf("preload: %w", first)
	}
	return res, nil
}

func loadRange(ctx context.Context, cfg *Config, ks *KeySpace, lo, hi int, rng *rand.Rand) (refused int64, err error) {
	d := net.Dialer{Timeout: cfg.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", cfg.Server)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	var wbuf []byte
	rbuf := make([]byte, 0, 64<<10)
	for i := lo; i < hi; {
		// A batch is LoadDepth sets or 4 MiB, whichever comes first.
		batch := 0
		wbuf = wbuf[:0]
		for batch < min(cfg.LoadDepth, hi-i) && len(wbuf) < 4<<20 {
			wbuf = AppendSet(wbuf, ks, i+batch, clampSize(Sample(cfg.ValueSize, rng), 0, cfg.MaxValue))
			batch++
		}
		if _, err := nc.Write(wbuf); err != nil {
			return refused, fmt.Errorf("write: %w", err)
		}
		for got := 0; got < batch; {
			kind, m, perr := ParseReply(rbuf)
			if perr != nil {
				return refused, perr
			}
			if m == 0 {
				if len(rbuf) == cap(rbuf) {
					rbuf = append(rbuf, 0)[:len(rbuf)]
				}
				n, err := nc.Read(rbuf[len(rbuf):cap(rbuf)])
				rbuf = rbuf[:len(rbuf)+n]
				if err != nil && n == 0 {
					return refused, fmt.Errorf("read after %d of %d records: %w", i+got-lo, hi-lo, err)
				}
				continue
			}
			rbuf = rbuf[:copy(rbuf, rbuf[m:])]
			if kind != ReplyStored {
				refused++
			}
			got++
		}
		i += batch
	}
	return refused, nil
}
