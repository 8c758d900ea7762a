package flash

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
)

// Targets.
const (
	Memcached = "memcached" // memcached 1.6.45
	Gocached  = "gocached"
)

// Options is one comparison: every target gets the same memory, the same
// ext_path size and ext_* options, the same keys, values and request
// stream.
type Options struct {
	Targets      []string
	GocachedBin  string
	MemcachedBin string
	Engine       string // gocached's --engine; "" = its default

	MemoryMB   int      // -m
	ExtSizeMB  int      // size of the one ext_path file
	ExtOptions []string // further -o ext_* settings, name=value, for both
	Dir        string   // where the ext_path files go ("" = the system's temp dir); removed after each run

	WorkingSet float64 // value bytes written, as a multiple of -m
	ValueSize  string  // value sizes (bench distribution spec); must stay above ext_item_size
	KeySize    int
	ZipfS      float64 // key popularity exponent
	LoadMBps   float64 // write pace in MB/s of values (0 = unpaced)
	Settle     Settle
	DropCache  bool // evict the ext files from the page cache before reading

	Conns    int           // get connections, one request in flight each
	Fill     bool          // set a key after its get missed
	Warmup   time.Duration // unmeasured gets before the measured phase
	Time     time.Duration // measured phase bound
	Requests int64         // measured phase bound, in gets (each phase)
	// TaggedTime bounds the phase after the measured one that files each
	// hit's latency as RAM or flash (0 = none).
	TaggedTime time.Duration
	Rounds     int // every target once per round, order rotated

	ServerCPU int // the CPU each server is pinned to
	// Runs with more steal or more CPU of other processes, in percent of
	// the machine, are left out of the medians.
	MaxStealPct, MaxOtherPct float64
	Seed                     uint64

	Log func(format string, args ...any) `json:"-"`
}

// DefaultOptions is a short comparison: -m 64, a 1 GB file, 4 x -m written.
func DefaultOptions() Options {
	return Options{
		Targets:     []string{Memcached, Gocached},
		MemoryMB:    64,
		ExtSizeMB:   1024,
		WorkingSet:  4,
		ValueSize:   "uniform:4096-16384",
		KeySize:     24,
		ZipfS:       0.99,
		LoadMBps:    64,
		Settle:      Settle{Interval: 250 * time.Millisecond, Quiet: 3 * time.Second, Max: 60 * time.Second},
		DropCache:   true,
		Conns:       4,
		Fill:        true,
		Warmup:      2 * time.Second,
		Time:        10 * time.Second,
		Requests:    2_000_000,
		TaggedTime:  5 * time.Second,
		Rounds:      3,
		ServerCPU:   1,
		MaxStealPct: 5,
		MaxOtherPct: 10,
		Seed:        1,
	}
}

// Validate reports the first setting that cannot work.
func (o *Options) Validate() error {
	switch {
	case len(o.Targets) == 0:
		return errors.New("no targets")
	case o.MemoryMB < 8 || o.ExtSizeMB < 64:
		return fmt.Errorf("-m %d MB and ext_path %d MB: want at least 8 and 64", o.MemoryMB, o.ExtSizeMB)
	case !(o.WorkingSet > 0) || o.WorkingSet > 64:
		return fmt.Errorf("working set %g x -m: want (0, 64]", o.WorkingSet)
	case o.KeySize < 8 || o.KeySize > bench.MaxKeyLen:
		return fmt.Errorf("key size %d: want [8, %d]", o.KeySize, bench.MaxKeyLen)
	case o.Conns < 1 || o.Conns > 256 || o.Rounds < 1 || o.Rounds > 100:
		return fmt.Errorf("conns %d, rounds %d: want [1, 256] and [1, 100]", o.Conns, o.Rounds)
	case o.Time <= 0 || o.Requests < 1 || o.Warmup < 0 || o.TaggedTime < 0:
		return errors.New("measured phase needs a positive time and request count")
	case o.Settle.Interval <= 0 || o.Settle.Quiet <= 0 || o.Settle.Max <= 0:
		return errors.New("settle interval, quiet and max must be positive")
	case !(o.LoadMBps >= 0):
		return fmt.Errorf("load pace %g MB/s", o.LoadMBps)
	}
	for _, t := range o.Targets {
		if t != Memcached && t != Gocached {
			return fmt.Errorf("target %q: want %s or %s", t, Memcached, Gocached)
		}
	}
	for _, e := range o.ExtOptions {
		if !strings.HasPrefix(e, "ext_") || !strings.Contains(e, "=") || strings.HasPrefix(e, "ext_path=") {
			return fmt.Errorf("ext option %q: want ext_NAME=VALUE (ext_path is set by the tool)", e)
		}
	}
	d, err := bench.ParseDistribution(o.ValueSize)
	if err != nil {
		return err
	}
	if lo := d.Quantile(0); lo < 1024 {
		return fmt.Errorf("value size %s: smallest %g bytes; keep values well above ext_item_size (512) so that every one can go to flash", o.ValueSize, lo)
	}
	if hi := d.Quantile(1 - 1e-12); hi > 512<<10 {
		return fmt.Errorf("value size %s: up to %g bytes, above the 512 KiB this tool sends", o.ValueSize, hi)
	}
	return nil
}

// serverArgs is the command line both servers get (the port is added when
// started): one thread, the same memory, one ext_path file of the same
// size, the same ext_* options.
func (o *Options) serverArgs(extFile string) []string {
	ext := append([]string{fmt.Sprintf("ext_path=%s:%dm", extFile, o.ExtSizeMB)}, o.ExtOptions...)
	return []string{"-l", "127.0.0.1", "-U", "0", "-t", "1", "-c", "1024",
		"-m", fmt.Sprint(o.MemoryMB), "-u", "root", "-o", strings.Join(ext, ",")}
}
