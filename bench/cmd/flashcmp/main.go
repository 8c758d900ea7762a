//go:build linux

// Command flashcmp runs a flash workload against memcached 1.6.45 and
// gocached with the same memory and the same ext_path file size: it writes a
// working set several times -m, waits until the server's flash writes stop,
// then measures gets with Zipf keys: hit ratio, the share of hits served
// from flash, throughput, p50/p99 overall and for RAM and flash hits,
// server CPU per get, RSS and steal.
//
//	go run ./bench/cmd/flashcmp                          # 3 rounds, ~3 minutes
//	go run ./bench/cmd/flashcmp --rounds 1 --time 3s     # a quick look
//
// Each server runs with -t 1 pinned to --server-cpu; this process pins
// itself to --client-cpu. It runs from the module root, where it builds
// ./cmd/gocached.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gocached/gocached/bench/benchmain"
	"github.com/gocached/gocached/bench/flash"
	flag "github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flashcmp:", err)
		os.Exit(1)
	}
}

func run() error {
	o := flash.DefaultOptions()
	targets, ext := strings.Join(o.Targets, ","), ""
	clientCPU := 0
	var out, from string
	flag.StringVar(&targets, "targets", targets, "servers to compare: memcached (1.6.45), gocached")
	flag.IntVar(&o.MemoryMB, "memory", o.MemoryMB, "-m of every server (MB)")
	flag.IntVar(&o.ExtSizeMB, "ext-size", o.ExtSizeMB, "size of the ext_path file (MB), in a fresh temp directory per run")
	flag.StringVar(&ext, "ext", "", "further ext_* options for both servers, comma separated (e.g. ext_item_age=5)")
	flag.StringVar(&o.Dir, "dir", "", "directory for the ext_path files (default: the system temp dir); pick one on the device to measure")
	flag.Float64Var(&o.WorkingSet, "working-set", o.WorkingSet, "value bytes written, as a multiple of -m")
	flag.StringVar(&o.ValueSize, "valuesize", o.ValueSize, "value size distribution (bench spec); keep it above ext_item_size")
	flag.IntVar(&o.KeySize, "keysize", o.KeySize, "key length")
	flag.Float64Var(&o.ZipfS, "zipf", o.ZipfS, "Zipf exponent of key popularity")
	flag.Float64Var(&o.LoadMBps, "load-rate", o.LoadMBps, "write pace, MB/s of values (0 = as fast as the server takes them)")
	flag.DurationVar(&o.Settle.Quiet, "settle-quiet", o.Settle.Quiet, "flash writes count as settled once extstore_objects_written stood still this long")
	flag.DurationVar(&o.Settle.Max, "settle-max", o.Settle.Max, "longest wait for flash writes to settle")
	flag.BoolVar(&o.DropCache, "drop-cache", o.DropCache, "evict the ext_path file's pages from the page cache before reading")
	flag.IntVar(&o.Conns, "conns", o.Conns, "get connections (one request in flight on each)")
	flag.BoolVar(&o.Fill, "fill", o.Fill, "set a key after its get missed (look-aside client); the set is counted in CPU per request, not in latency")
	flag.DurationVar(&o.Warmup, "warmup", o.Warmup, "unmeasured gets before the measured phase")
	flag.DurationVar(&o.Time, "time", o.Time, "measured phase: at most this long")
	flag.DurationVar(&o.TaggedTime, "tagged-time", o.TaggedTime, "phase after the measured one timing RAM and flash hits apart (each get after a `me` of its key); 0 = skip")
	flag.Int64Var(&o.Requests, "requests", o.Requests, "measured phase: at most this many gets")
	flag.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds; each runs every target once, order rotated")
	flag.IntVar(&o.ServerCPU, "server-cpu", o.ServerCPU, "the CPU every server is pinned to")
	flag.Float64Var(&o.MaxStealPct, "max-steal", o.MaxStealPct, "leave runs with more steal (% of the machine) out of the medians")
	flag.Float64Var(&o.MaxOtherPct, "max-other", o.MaxOtherPct, "leave runs where other processes took more of the machine (%) out of the medians")
	flag.IntVar(&clientCPU, "client-cpu", clientCPU, "the CPU this process (the client) is pinned to; -1 = not pinned")
	flag.StringVar(&o.Engine, "engine", "", "gocached --engine (default: the binary's)")
	flag.StringVar(&o.GocachedBin, "gocached", "", "gocached binary (default: build ./cmd/gocached)")
	flag.StringVar(&o.MemcachedBin, "memcached", "", "memcached 1.6.45 binary (default: built from Debian's source package, kept in the test cache)")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of value sizes and key draws (the same for every server)")
	flag.StringVar(&out, "out", "", "also write every record and the summaries as JSON here")
	flag.StringVar(&from, "from", "", "print the table of an earlier --out file and stop")
	flag.Parse()
	if from != "" {
		return reprint(from)
	}
	if err := pinSelf(clientCPU); err != nil {
		return err
	}
	o.Targets = strings.Split(targets, ",")
	if ext != "" {
		o.ExtOptions = strings.Split(ext, ",")
	}
	if err := o.Validate(); err != nil {
		return err
	}
	o.Log = benchmain.Logf
	env, err := benchmain.Start("flashcmp", syscall.SIGTERM)
	if err != nil {
		return err
	}
	defer env.Close()
	if slices.Contains(o.Targets, flash.Gocached) {
		if err := env.Build(&o.GocachedBin, benchmain.GocachedPkg); err != nil {
			return err
		}
	}
	if slices.Contains(o.Targets, flash.Memcached) {
		if err := env.Memcached(&o.MemcachedBin); err != nil {
			return err
		}
	}
	recs, runErr := flash.Run(env.Ctx, o)
	if len(recs) > 0 {
		if err := flash.WriteMarkdown(os.Stdout, &o, flash.Summarize(recs)); err != nil {
			return err
		}
		if out != "" {
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := flash.WriteJSON(f, &o, recs); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	return runErr
}

func reprint(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	o, recs, err := flash.ReadJSON(f)
	if err != nil {
		return err
	}
	return flash.WriteMarkdown(os.Stdout, &o, flash.Summarize(recs))
}

// pinSelf re-executes this command under taskset on cpu unless every thread
// already runs there: an affinity set now would hold only for the calling
// thread, not for the runtime's threads started before it.
func pinSelf(cpu int) error {
	if cpu < 0 {
		return nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return err
	}
	if set.Count() == 1 && set.IsSet(cpu) {
		return nil
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	argv := append([]string{"taskset", "-c", strconv.Itoa(cpu), self}, os.Args[1:]...)
	return syscall.Exec(taskset, argv, os.Environ())
}
