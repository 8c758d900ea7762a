package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Config describes one load-generator run; the field names follow
// mutilate's options.
type Config struct {
	Server       string        // -s host:port
	QPS          float64       // -q target aggregate rate; 0 = closed loop (peak)
	Time         time.Duration // -t measured interval
	Warmup       time.Duration // -w load before measuring
	Connections  int           // -c connections per thread
	Threads      int           // -T pacing threads
	Depth        int           // -d most outstanding requests per connection
	MultiGet     int           // keys per get request (1 = single-key gets)
	KeySize      Distribution  // -K
	ValueSize    Distribution  // -V
	InterArrival Distribution  // -i, stretched to the per-connection rate
	Records      int           // -r
	Update       float64       // -u fraction of requests that are sets
	NoLoad       bool          // skip the preload
	LoadOnly     bool          // preload, then stop
	Seed         uint64        // random seed; runs with the same seed send the same stream
	Spin         time.Duration // open loop: busy-wait (not sleep) this close to each send time

	MaxValue     int           // largest value size sent (samples are clamped)
	DialTimeout  time.Duration // per connection
	DrainTimeout time.Duration // how long replies may still arrive after the last send
	LoadTimeout  time.Duration // bound on the preload phase
	LoadDepth    int           // sets per preload batch

	Engine string // EngineEpoll or EngineGo; "" picks epoll where it exists

	Progress      io.Writer     // progress lines go here; nil = none
	ProgressEvery time.Duration // interval between progress lines
}

// DefaultConfig holds mutilate's defaults.
func DefaultConfig() Config {
	return Config{
		Server:        "127.0.0.1:11211",
		Time:          5 * time.Second,
		Connections:   1,
		Threads:       1,
		Depth:         1,
		MultiGet:      1,
		KeySize:       Fixed{Value: 30},
		ValueSize:     Fixed{Value: 200},
		InterArrival:  Exponential{Rate: 1},
		Records:       10000,
		MaxValue:      1 << 20,
		DialTimeout:   5 * time.Second,
		DrainTimeout:  2 * time.Second,
		LoadTimeout:   5 * time.Minute,
		LoadDepth:     128,
		ProgressEvery: time.Second,
	}
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	switch {
	case c.Server == "":
		return errors.New("no server (-s)")
	case !(c.QPS >= 0) || math.IsInf(c.QPS, 1):
		return fmt.Errorf("qps %g: want a finite rate >= 0", c.QPS)
	case c.Time <= 0 && !c.LoadOnly:
		return fmt.Errorf("time %v must be positive", c.Time)
	case c.Warmup < 0:
		return fmt.Errorf("warmup %v is negative", c.Warmup)
	case c.Connections < 1 || c.Threads < 1 || c.Depth < 1:
		return fmt.Errorf("connections %d, threads %d, depth %d: each must be at least 1", c.Connections, c.Threads, c.Depth)
	case c.Connections*c.Threads > 10000:
		return fmt.Errorf("%d connections is more than this tool opens", c.Connections*c.Threads)
	case c.KeySize == nil || c.ValueSize == nil || c.InterArrival == nil:
		return errors.New("key size, value size and inter-arrival distributions are required")
	case c.Records < 1:
		return fmt.Errorf("records %d must be at least 1", c.Records)
	case c.MultiGet < 1 || c.MultiGet > MaxMultiGet:
		return fmt.Errorf("multiget %d is outside [1, %d]", c.MultiGet, MaxMultiGet)
	case !(c.Update >= 0 && c.Update <= 1):
		return fmt.Errorf("update ratio %g is outside [0, 1]", c.Update)
	case c.NoLoad && c.LoadOnly:
		return errors.New("--noload and --loadonly exclude each other")
	case c.MaxValue < 0 || c.MaxValue > MaxValueLen:
		return fmt.Errorf("max value %d is outside [0, %d]", c.MaxValue, MaxValueLen)
	case c.Spin < 0 || c.Spin > time.Second:
		return fmt.Errorf("spin %v is outside [0, 1s]", c.Spin)
	case c.Engine != "" && c.Engine != EngineGo && (c.Engine != EngineEpoll || !haveEpoll):
		return fmt.Errorf("engine %q is not available here (want %s or %s)", c.Engine, EngineEpoll, EngineGo)
	case c.DrainTimeout <= 0 || c.DialTimeout <= 0 || c.LoadTimeout <= 0 || c.LoadDepth < 1:
		return errors.New("timeouts and load depth must be positive")
	}
	return nil
}

// Engines.
const (
	// EngineEpoll runs each load thread as one OS thread with its own epoll
	// set, timed by epoll_pwait2's nanosecond timeout, as mutilate's
	// event loop does: no goroutine handoffs per request. Linux only.
	EngineEpoll = "epoll"
	// EngineGo uses goroutines and the Go netpoller: portable, but every
	// request costs thread wake-ups.
	EngineGo = "go"
)

func (c *Config) engine() string {
	if c.Engine == "" {
		return defaultEngine
	}
	return c.Engine
}

// conns is the total number of connections.
func (c *Config) conns() int { return c.Connections * c.Threads }
