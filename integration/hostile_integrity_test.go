package integration

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Bounds of the integrity soak. The whole test stays under
// integrityBudget however many engines the harness lists.
const (
	integrityClients   = 8
	integrityKeys      = 24
	integrityMaxValue  = 200 << 10
	integrityBudget    = 12 * time.Second
	integrityMaxRun    = 5 * time.Second
	integrityMaxRounds = 100000 // per client, a bound besides the clock
	integrityIOTimeout = 20 * time.Second
)

// TestValueIntegrity is a soak over many clients that pipeline sets of
// checksummed values of random sizes (a few bytes to 200 KB) with gets,
// multigets and gets of the same keys. Every value read must be whole and
// its own: the key, writer, length and checksum inside it must match the
// VALUE line it came with, and the flags (the checksum's low bits) must
// match too, so a torn value, a value of another key, or a value with
// another write's metadata fails the test.
func TestValueIntegrity(t *testing.T) {
	run := min(integrityMaxRun, integrityBudget/time.Duration(len(engineTargets)))
	forEachEngine(t, func(t *testing.T, tg target) {
		p := startServer(t, tg, "-t", "4")
		var st integrityStats
		errs := make([]error, integrityClients)
		deadline := time.Now().Add(run)
		var wg sync.WaitGroup
		for id := range integrityClients {
			wg.Go(func() { errs[id] = integrityClient(p.Addr(), id, deadline, &st) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: %d sets, %d values read and verified (%d MiB), %d misses",
			run, st.sets.Load(), st.hits.Load(), st.bytes.Load()>>20, st.misses.Load())
		if st.hits.Load() == 0 {
			t.Fatal("no value was read back: the soak verified nothing")
		}
	})
}

type integrityStats struct {
	sets, hits, misses, bytes atomic.Int64
}

// integrityValue builds a value for key by writer: a header naming both, a
// payload drawn from rng, and the checksum of both in hex. flags carry the
// checksum's low 32 bits.
func integrityValue(rng *rand.Rand, key string, writer, seq int) (value []byte, flags uint32) {
	size := rng.IntN(1 << 10)
	switch r := rng.IntN(10); {
	case r >= 8:
		size = rng.IntN(integrityMaxValue)
	case r >= 5:
		size = rng.IntN(16 << 10)
	}
	head := fmt.Sprintf("%s|%d|%d|%d|", key, writer, seq, size)
	b := make([]byte, 0, len(head)+size+16)
	b = append(b, head...)
	fill := byte('a' + rng.IntN(26))
	for i := range size {
		b = append(b, fill+byte(i%7)) // cheap, but differs per write
	}
	sum := xxhash.Sum64(b)
	b = fmt.Appendf(b, "%016x", sum)
	return b, uint32(sum)
}

// checkIntegrityValue verifies a value read under key with flags.
func checkIntegrityValue(key string, flags uint32, v []byte) error {
	if len(v) < 16 {
		return fmt.Errorf("value of %s is %d bytes, shorter than its checksum", key, len(v))
	}
	body, tail := v[:len(v)-16], v[len(v)-16:]
	sum := xxhash.Sum64(body)
	if string(tail) != fmt.Sprintf("%016x", sum) {
		return fmt.Errorf("torn value of %s: %d bytes, checksum %s, computed %016x (head %q)", key, len(v), tail, sum, abbreviate(string(body)))
	}
	f := strings.SplitN(string(body[:min(len(body), 128)]), "|", 5)
	if len(f) != 5 || f[0] != key {
		return fmt.Errorf("foreign value under %s: head %q", key, abbreviate(string(body)))
	}
	if n, err := strconv.Atoi(f[3]); err != nil || len(body) != len(f[0])+len(f[1])+len(f[2])+len(f[3])+4+n {
		return fmt.Errorf("value of %s has the wrong length %d for head %q", key, len(v), abbreviate(string(body)))
	}
	if flags != uint32(sum) {
		return fmt.Errorf("value of %s came with flags %d, its write had %d", key, flags, uint32(sum))
	}
	return nil
}

// integrityReq is one pipelined request and the keys its reply may hold.
type integrityReq struct {
	set  bool
	keys []string
}

// integrityClient pipelines rounds of requests until the deadline: a writer
// goroutine sends each round while the client reads and verifies replies,
// so a round's replies never wait for its requests to be sent.
func integrityClient(addr string, id int, deadline time.Time, st *integrityStats) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 64<<10)
	rng := rand.New(rand.NewPCG(uint64(id), 0x5eed))
	seq := 0
	for round := 0; round < integrityMaxRounds && time.Now().Before(deadline); round++ {
		_ = nc.SetDeadline(time.Now().Add(integrityIOTimeout))
		var buf bytes.Buffer
		reqs := make([]integrityReq, 2+rng.IntN(14))
		for i := range reqs {
			key := "int:k" + strconv.Itoa(rng.IntN(integrityKeys))
			switch c := rng.IntN(10); {
			case c < 4:
				seq++
				v, flags := integrityValue(rng, key, id, seq)
				fmt.Fprintf(&buf, "set %s %d 0 %d\r\n", key, flags, len(v))
				buf.Write(v)
				buf.WriteString("\r\n")
				reqs[i] = integrityReq{set: true, keys: []string{key}}
			case c < 7:
				cmd := "get"
				if c == 6 {
					cmd = "gets"
				}
				fmt.Fprintf(&buf, "%s %s\r\n", cmd, key)
				reqs[i] = integrityReq{keys: []string{key}}
			default:
				keys := []string{key}
				for range 1 + rng.IntN(4) {
					keys = append(keys, "int:k"+strconv.Itoa(rng.IntN(integrityKeys)))
				}
				fmt.Fprintf(&buf, "get %s\r\n", strings.Join(keys, " "))
				reqs[i] = integrityReq{keys: keys}
			}
		}
		sent := make(chan error, 1)
		go func() {
			_, err := nc.Write(buf.Bytes())
			sent <- err
		}()
		rerr := readIntegrityReplies(r, reqs, st)
		if rerr != nil {
			nc.Close() // unblocks the writer
		}
		if err := <-sent; err != nil && rerr == nil {
			return fmt.Errorf("client %d round %d: write: %w", id, round, err)
		}
		if rerr != nil {
			return fmt.Errorf("client %d round %d: %w", id, round, rerr)
		}
	}
	return nil
}

// readIntegrityReplies reads and verifies the replies of one round.
func readIntegrityReplies(r *bufio.Reader, reqs []integrityReq, st *integrityStats) error {
	for _, req := range reqs {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if req.set {
			if line != "STORED\r\n" {
				return fmt.Errorf("set %s: %q", req.keys[0], line)
			}
			st.sets.Add(1)
			continue
		}
		next := 0 // values come in the order of the keys asked, misses skipped
		for ; line != "END\r\n"; line, err = r.ReadString('\n') {
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "VALUE" {
				return fmt.Errorf("get %v: unexpected line %q", req.keys, abbreviate(line))
			}
			for next < len(req.keys) && req.keys[next] != f[1] {
				next++
			}
			if next == len(req.keys) {
				return fmt.Errorf("get %v: value of %s, not asked for or out of order", req.keys, f[1])
			}
			next++
			flags, err1 := strconv.ParseUint(f[2], 10, 32)
			n, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || n < 0 || n > integrityMaxValue+256 {
				return fmt.Errorf("bad VALUE line %q", line)
			}
			data := make([]byte, n+2)
			if _, err := io.ReadFull(r, data); err != nil {
				return fmt.Errorf("read value of %s: %w", f[1], err)
			}
			if !bytes.HasSuffix(data, []byte("\r\n")) {
				return fmt.Errorf("value of %s not followed by CRLF: %d bytes too few or many", f[1], n)
			}
			if err := checkIntegrityValue(f[1], uint32(flags), data[:n]); err != nil {
				return err
			}
			st.hits.Add(1)
			st.bytes.Add(int64(n))
		}
		st.misses.Add(int64(len(req.keys) - next))
	}
	return nil
}

// TestIntegrityCheck shows the check rejects a torn value, a value of
// another key and a value with another write's flags.
func TestIntegrityCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	v, flags := integrityValue(rng, "k1", 3, 4)
	if err := checkIntegrityValue("k1", flags, v); err != nil {
		t.Fatalf("a whole value was rejected: %v", err)
	}
	torn := bytes.Clone(v)
	torn[len(torn)/2] ^= 1
	if checkIntegrityValue("k1", flags, torn) == nil {
		t.Error("a torn value passed")
	}
	if checkIntegrityValue("k2", flags, v) == nil {
		t.Error("a value of k1 passed as k2's")
	}
	if checkIntegrityValue("k1", flags+1, v) == nil {
		t.Error("a value with another write's flags passed")
	}
	if checkIntegrityValue("k1", flags, v[:len(v)-1]) == nil {
		t.Error("a truncated value passed")
	}
}
