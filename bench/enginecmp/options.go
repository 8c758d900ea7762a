// Package enginecmp compares server engines on loopback the way issue 3's
// target is stated: one server thread pinned to one CPU, the same mcload
// load pinned to another, for gocached's engines and memcached -t 1 (the
// newest release, 1.6.45, built from Debian's source package, and Debian
// 12's 1.6.18). Besides throughput it splits the
// server's CPU per request into user and kernel time, because on loopback
// the kernel's TCP work (which no engine can avoid) bounds how far any
// engine can pull ahead of another.
package enginecmp

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Targets a comparison can run.
const (
	Epoll         = "epoll"            // gocached --engine=epoll -t 1
	Go            = "go"               // gocached --engine=go with GOMAXPROCS 1
	Uring         = "uring"            // gocached --engine=uring -t 1
	Memcached     = "memcached"        // memcached 1.6.45 -t 1, the peer gocached must beat
	Memcached1618 = "memcached-1.6.18" // Debian 12's memcached -t 1
	// Floor is bench/cmd/epollfloor: the system calls of an epoll server
	// and next to no user-space work, what the kernel alone charges.
	Floor = "floor"
	// UringFloor is bench/cmd/uringfloor: the kernel requests of
	// gocached's io_uring engine, on the engine's ring code, and next to
	// no user-space work.
	UringFloor = "uring-floor"
	// AltSuffix marks a gocached target run from the second binary
	// (Options.GocachedAltBin): "epoll-alt" is the epoll engine of that
	// build, for a before/after of two builds in the same interleaved run.
	AltSuffix = "-alt"
)

// IsMemcached reports whether target is one of the memcached releases.
func IsMemcached(target string) bool { return target == Memcached || target == Memcached1618 }

// IsGocached reports whether target is a gocached engine, of either build.
func IsGocached(target string) bool {
	e := Engine(target)
	return e == Epoll || e == Go || e == Uring
}

// Engine is the --engine of a gocached target ("epoll" for "epoll-alt").
func Engine(target string) string { return strings.TrimSuffix(target, AltSuffix) }

// IsAlt reports whether target runs the second gocached build.
func IsAlt(target string) bool { return IsGocached(target) && strings.HasSuffix(target, AltSuffix) }

func knownTarget(t string) bool {
	return IsGocached(t) || IsMemcached(t) || t == Floor || t == UringFloor
}

// Shape is one closed-loop load: Conns connections, each keeping Depth
// requests in flight.
type Shape struct {
	Conns, Depth int
}

func (s Shape) String() string { return fmt.Sprintf("%dx%d", s.Conns, s.Depth) }

// maxShapeConns bounds a shape's connections below the servers' -c.
const maxShapeConns = 4000

// ParseShapes reads a comma-separated list of CONNSxDEPTH, e.g. "64x1,8x4".
func ParseShapes(s string) ([]Shape, error) {
	var out []Shape
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		c, d, ok := strings.Cut(f, "x")
		if !ok {
			return nil, fmt.Errorf("shape %q: want CONNSxDEPTH", f)
		}
		conns, err1 := strconv.Atoi(c)
		depth, err2 := strconv.Atoi(d)
		if err1 != nil || err2 != nil || conns < 1 || depth < 1 || conns > maxShapeConns || depth > 1024 {
			return nil, fmt.Errorf("shape %q: connections 1..%d and depth 1..1024", f, maxShapeConns)
		}
		out = append(out, Shape{Conns: conns, Depth: depth})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no shapes in %q", s)
	}
	return out, nil
}

// Options configure one comparison.
type Options struct {
	Targets   []string
	Shapes    []Shape
	Runs      int           // repetitions of every (shape, target); medians are reported
	Time      time.Duration // measured time per run
	Records   int           // key space, preloaded before each run
	KeySize   string        // mcload -K
	ValueSize string        // mcload -V
	Update    float64       // mcload -u
	ServerCPU int           // the one CPU every server runs on
	ClientCPU int           // the CPU mcload runs on
	// Testbed runs server and client in the two namespaces of a one-queue
	// NAPI testbed instead of on loopback: "plain" (the server's receive
	// work runs on the client's core) or "threaded" (threaded NAPI with
	// each side's kthread pinned to that side's CPU, as behind a NIC whose
	// IRQ is affined to the server core). On loopback the server's send
	// also runs the client's TCP receive, which no engine can avoid; on the
	// threaded bed each process pays only for its own side.
	Testbed string

	bed *bedHandle // the bed Run built for Testbed (a kernel/testbed.Bed on Linux)

	GocachedBin, MCLoadBin string
	// GocachedAltBin is the build the "-alt" targets run.
	GocachedAltBin string
	FloorBin       string // bench/cmd/epollfloor, for the floor target
	UringFloorBin  string // bench/cmd/uringfloor, for the uring-floor target
	// MemcachedBin is memcached 1.6.45 (Memcached); Memcached1618Bin is
	// Debian 12's package (Memcached1618).
	MemcachedBin, Memcached1618Bin string
	OutDir                         string // results.json and report.md; "" writes none
	Log                            func(format string, args ...any)
}

// DefaultOptions: gocached's two reactor engines and memcached 1.6.45, a
// latency-bound shape (64 connections, no pipelining), a lightly pipelined
// one and a deeply pipelined one. MemcachedBin is left for the caller to
// build (refmc); Debian's package is memcached 1.6.18.
func DefaultOptions() Options {
	return Options{
		Targets:          []string{Epoll, Uring, Memcached},
		Shapes:           []Shape{{64, 1}, {8, 4}, {16, 16}},
		Runs:             3,
		Time:             5 * time.Second,
		Records:          10000,
		KeySize:          "fixed:30",
		ValueSize:        "fixed:100",
		Update:           0.03,
		ServerCPU:        1,
		ClientCPU:        0,
		Memcached1618Bin: "memcached",
	}
}

// Validate checks o before anything starts.
func (o *Options) Validate() error {
	if len(o.Targets) == 0 {
		return fmt.Errorf("no targets")
	}
	for _, t := range o.Targets {
		if !knownTarget(t) {
			return fmt.Errorf("target %q: want %s, %s, %s (each also with %s), %s, %s, %s or %s", t, Epoll, Go, Uring, AltSuffix,
				Memcached, Memcached1618, Floor, UringFloor)
		}
		if IsAlt(t) && o.GocachedAltBin == "" {
			return fmt.Errorf("target %q needs the second build (--gocached-alt)", t)
		}
	}
	switch {
	case len(o.Shapes) == 0:
		return fmt.Errorf("no shapes")
	case o.Runs < 1:
		return fmt.Errorf("runs %d: want at least 1", o.Runs)
	case o.Time < 500*time.Millisecond || o.Time > 10*time.Minute:
		return fmt.Errorf("time %v: want 500ms..10m", o.Time)
	case o.Records < 1:
		return fmt.Errorf("records %d: want at least 1", o.Records)
	case o.ServerCPU < 0 || o.ClientCPU < 0:
		return fmt.Errorf("CPUs must be non-negative")
	case o.Testbed != "" && o.Testbed != "plain" && o.Testbed != "threaded":
		return fmt.Errorf("testbed %q: want plain or threaded (or none for loopback)", o.Testbed)
	}
	return nil
}
