// Command mcload is a mutilate-class load generator for memcached-protocol
// servers (memcached, gocached). It takes mutilate's option names:
//
//	go run ./bench/cmd/mcload -s 127.0.0.1:11211 -q 50000 -t 10 -w 2 \
//	    -K fb_key -V fb_value -i fb_ia -r 1000000 -u 0.03 -d 1
//
// -q 0 is the closed loop (peak rate). In the open loop, latency counts
// from each request's scheduled send time, so a server stall shows up in
// every request it delays. Point it only at loopback or at addresses of
// network namespaces you own.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gocached/gocached/bench"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcload:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := bench.DefaultConfig()
	var (
		qps, seconds, warmup float64
		keySize, valueSize   string
		iaDist               string
		asJSON, quiet        bool
	)
	flag.StringVarP(&cfg.Server, "server", "s", cfg.Server, "memcached server host:port")
	flag.Float64VarP(&qps, "qps", "q", 0, "target aggregate QPS; 0 = peak (closed loop)")
	flag.Float64VarP(&seconds, "time", "t", 5, "measured interval in seconds")
	flag.Float64VarP(&warmup, "warmup", "w", 0, "warmup seconds before measuring")
	flag.IntVarP(&cfg.Connections, "connections", "c", cfg.Connections, "connections per thread")
	flag.IntVarP(&cfg.Threads, "threads", "T", cfg.Threads, "load threads (event loops), each with -c connections")
	flag.IntVarP(&cfg.Depth, "depth", "d", cfg.Depth, "most outstanding requests per connection")
	flag.IntVar(&cfg.MultiGet, "multiget", cfg.MultiGet, "keys per get request (a reply with any value counts as a hit)")
	flag.StringVarP(&keySize, "keysize", "K", "30", "key length distribution")
	flag.StringVarP(&valueSize, "valuesize", "V", "200", "value length distribution")
	flag.StringVarP(&iaDist, "iadist", "i", "exponential", "inter-arrival distribution, scaled to --qps")
	flag.IntVarP(&cfg.Records, "records", "r", cfg.Records, "number of records (key space)")
	flag.Float64VarP(&cfg.Update, "update", "u", 0, "ratio of sets to all requests")
	flag.BoolVar(&cfg.NoLoad, "noload", false, "skip loading the records")
	flag.BoolVar(&cfg.LoadOnly, "loadonly", false, "load the records, then exit")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (0 = random)")
	flag.DurationVar(&cfg.Spin, "spin", 0, "open loop: busy-wait instead of sleeping this close to each send (e.g. 50us); costs client CPU, removes wake-up lag")
	flag.StringVar(&cfg.Engine, "engine", "", "load engine: epoll (Linux: one event-loop thread per -T, like mutilate) or go (goroutines); default epoll where available")
	flag.IntVar(&cfg.MaxValue, "value-max", cfg.MaxValue, "clamp sampled value sizes to this many bytes")
	flag.DurationVar(&cfg.DrainTimeout, "drain", cfg.DrainTimeout, "how long replies may arrive after the last send")
	flag.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	flag.BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mcload -s host:port [options]\n\n%s\n%s", flag.CommandLine.FlagUsages(), distHelp)
	}
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}

	cfg.QPS = qps
	cfg.Time = time.Duration(seconds * float64(time.Second))
	cfg.Warmup = time.Duration(warmup * float64(time.Second))
	for _, d := range []struct {
		spec string
		dst  *bench.Distribution
		name string
	}{{keySize, &cfg.KeySize, "--keysize"}, {valueSize, &cfg.ValueSize, "--valuesize"}, {iaDist, &cfg.InterArrival, "--iadist"}} {
		v, err := bench.ParseDistribution(d.spec)
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		*d.dst = v
	}
	if !quiet {
		cfg.Progress = os.Stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		return res.WriteJSON(os.Stdout)
	}
	return res.WriteText(os.Stdout)
}

const distHelp = `Distributions are <kind>[:<params>]:
  N | fixed:N                 always N
  uniform:MAX | uniform:A-B   uniform on [0,MAX] or [A,B]
  normal:MEAN,SD
  exponential[:LAMBDA]
  pareto:LOC,SCALE,SHAPE      generalized Pareto
  gev:LOC,SCALE,SHAPE         generalized extreme value
  fb_key, fb_value, fb_ia     Facebook ETC workload (Atikoglu et al., SIGMETRICS 2012)
`
