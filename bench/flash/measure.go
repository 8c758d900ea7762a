package flash

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocached/gocached/bench"
)

// maxLatency bounds the histograms (ns).
const maxLatency = int64(100 * time.Second)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, maxLatency, 3) }

// Tally is what a get phase saw. In a tagged phase every get is preceded
// by `me` for the same key on the same connection, whose answer says where
// the value is at that moment, so each hit's latency is filed as a RAM or a
// flash hit. A census taken before the phase would not do: memcached moves
// a flash item back to RAM on a hit now and then (ext_recache_rate), and
// under Zipf keys those few moves are the hottest keys, which carry a
// large share of all hits.
type Tally struct {
	Gets, Hits, Misses int64
	Errors             int64 // error replies and values of the wrong length
	FirstError         string
	Fills              int64           // sets after a miss
	FillsRefused       int64           // of those, not STORED
	HitsBy             [numWhere]int64 // tagged hits by where `me` found the key (Missing: set in between)
	All                *hdrhistogram.Histogram
	Hit                [numWhere]*hdrhistogram.Histogram
	Miss               *hdrhistogram.Histogram
	Seconds            float64
}

func newTally() *Tally {
	t := &Tally{All: newHist(), Miss: newHist()}
	for i := range t.Hit {
		t.Hit[i] = newHist()
	}
	return t
}

func (t *Tally) merge(o *Tally) {
	t.Gets += o.Gets
	t.Hits += o.Hits
	t.Misses += o.Misses
	t.Errors += o.Errors
	t.Fills += o.Fills
	t.FillsRefused += o.FillsRefused
	if t.FirstError == "" {
		t.FirstError = o.FirstError
	}
	t.All.Merge(o.All)
	t.Miss.Merge(o.Miss)
	for i := range t.Hit {
		t.HitsBy[i] += o.HitsBy[i]
		t.Hit[i].Merge(o.Hit[i])
	}
}

func (t *Tally) record(ns int64, hit bool, w Where) {
	ns = min(max(ns, 1), maxLatency)
	t.Gets++
	_ = t.All.RecordValue(ns)
	if hit {
		t.Hits++
		if w < numWhere {
			t.HitsBy[w]++
			_ = t.Hit[w].RecordValue(ns)
		}
	} else {
		t.Misses++
		_ = t.Miss.RecordValue(ns)
	}
}

// GetPhase is one closed-loop phase of single-key gets.
type GetPhase struct {
	Conns    int           // connections, one request in flight on each
	Requests int64         // stop after this many gets in all
	Time     time.Duration // or after this long
	Seed     uint64
	// Tag, when set, makes every get follow a `me` of its key; a chunk
	// size class in Tag means the item there is a flash header.
	Tag map[int]bool
	// Fill sets a key after its get missed, as a look-aside client does,
	// so that the cache comes to hold the popular keys; the set is not
	// timed.
	Fill bool
}

// runGets sends gets for Zipf-drawn records on p.Conns connections until
// either bound is reached. One request in flight per connection keeps a
// RAM hit from waiting behind a flash read on the same connection, so each
// latency is the key's own.
func runGets(ctx context.Context, addr string, ks *bench.KeySpace, sizes []int, z *Zipf, p GetPhase) (*Tally, error) {
	// Every connection is open before the clock starts, and none is left
	// open when one cannot be.
	conns := make([]net.Conn, 0, p.Conns)
	for range p.Conns {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, err
		}
		conns = append(conns, nc)
	}
	start := time.Now()
	end := start.Add(p.Time)
	var budget atomic.Int64
	budget.Store(p.Requests)
	total := newTally()
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, p.Conns)
	for c, nc := range conns {
		_ = nc.SetDeadline(end.Add(10 * time.Second))
		stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stop()
			defer nc.Close()
			t := newTally()
			errs[c] = getLoop(nc, ks, sizes, p, z, rand.New(rand.NewPCG(p.Seed, uint64(c)+1)), &budget, end, t)
			mu.Lock()
			total.merge(t)
			mu.Unlock()
		}()
	}
	wg.Wait()
	total.Seconds = time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return total, err
	}
	return total, ctx.Err()
}

// untagged files a get under no class.
const untagged = numWhere

func getLoop(nc net.Conn, ks *bench.KeySpace, sizes []int, p GetPhase, z *Zipf, rng *rand.Rand, budget *atomic.Int64, end time.Time, t *Tally) error {
	r := bufio.NewReaderSize(nc, 64<<10)
	var wbuf []byte
	for budget.Add(-1) >= 0 && time.Now().Before(end) {
		rec := z.Next(rng)
		w := untagged
		if p.Tag != nil {
			// Its reply is read before the get goes out, so the get's
			// latency is its own.
			wbuf = append(ks.AppendKey(append(wbuf[:0], "me "...), rec), "\r\n"...)
			if _, err := nc.Write(wbuf); err != nil {
				return err
			}
			line, err := r.ReadSlice('\n')
			if err != nil {
				return err
			}
			if w, err = parseMetaDebug(line, p.Tag); err != nil {
				return err
			}
		}
		wbuf = bench.AppendGet(wbuf[:0], ks, rec)
		sent := time.Now()
		if _, err := nc.Write(wbuf); err != nil {
			return err
		}
		n, hit, err := readGet(r)
		lat := time.Since(sent).Nanoseconds()
		if err != nil {
			return err
		}
		if hit && n != sizes[rec] {
			t.Errors++
			if t.FirstError == "" {
				t.FirstError = fmt.Sprintf("record %d: %d bytes back, %d written", rec, n, sizes[rec])
			}
		}
		t.record(lat, hit, w)
		if !hit && p.Fill {
			if err := fill(nc, r, ks, rec, sizes[rec], t, &wbuf); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill sets record rec after a miss and reads the reply.
func fill(nc net.Conn, r *bufio.Reader, ks *bench.KeySpace, rec, size int, t *Tally, wbuf *[]byte) error {
	*wbuf = bench.AppendSet((*wbuf)[:0], ks, rec, size)
	if _, err := nc.Write(*wbuf); err != nil {
		return err
	}
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	t.Fills++
	if string(bytes.TrimRight(line, "\r\n")) != "STORED" {
		t.FillsRefused++
	}
	return nil
}

// readGet reads one reply to a single-key get: the value's length and true,
// or false for a miss.
func readGet(r *bufio.Reader) (n int, hit bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	line = bytes.TrimRight(line, "\r\n")
	if string(line) == "END" {
		return 0, false, nil
	}
	f := bytes.Fields(line)
	if len(f) < 4 || string(f[0]) != "VALUE" {
		return 0, false, fmt.Errorf("get: reply %q", line)
	}
	if n, err = strconv.Atoi(string(f[3])); err != nil || n < 0 || n > bench.MaxValueLen {
		return 0, false, fmt.Errorf("get: reply %q", line)
	}
	if _, err := r.Discard(n + 2); err != nil {
		return 0, false, err
	}
	line, err = r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	if string(bytes.TrimRight(line, "\r\n")) != "END" {
		return 0, false, fmt.Errorf("get: %q after a value", line)
	}
	return n, true, nil
}
