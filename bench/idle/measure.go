package idle

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/internal/testproc"
)

// Targets the idle server must meet (per server, every engine).
const (
	MaxWakeupsPerSec = 20
	MaxCPUPct        = 0.2
)

// Case is one idle server: how it is started, how many items it holds
// and how many clients sit connected to it without sending anything.
type Case struct {
	Name      string
	Spec      testproc.Spec
	IdleConns int
	Items     int // stored (without expiry) before the server settles
}

// Result is one case's measurement.
type Result struct {
	Case       string        `json:"case"`
	Window     time.Duration `json:"window_ns"`
	WakeupsPS  float64       `json:"wakeups_per_s"`
	CPUPct     float64       `json:"cpu_pct"` // of one CPU
	Threads    int           `json:"threads"`
	Woken      int           `json:"threads_woken"`
	TopPS      float64       `json:"top_thread_wakeups_per_s"`
	IdleConns  int           `json:"idle_conns"`
	WithinGoal bool          `json:"within_goal"`
}

// Measure starts c's server on a free loopback port, connects its idle
// clients (each makes one round trip, so it is accepted and served once),
// lets the server settle, and reads its threads' accounting over window.
func Measure(ctx context.Context, c Case, settle, window time.Duration) (Result, error) {
	srv, err := testproc.StartOnFreePort(ctx, c.Spec)
	if err != nil {
		return Result{}, err
	}
	defer srv.Stop(10 * time.Second)
	var conns []net.Conn
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()
	if c.Items > 0 {
		if err := fill(ctx, srv.Addr(), c.Items); err != nil {
			return Result{}, fmt.Errorf("%s: storing %d items: %w", c.Name, c.Items, err)
		}
	}
	for range c.IdleConns {
		cn, err := roundTrip(ctx, srv.Addr())
		if err != nil {
			return Result{}, fmt.Errorf("%s: idle client: %w", c.Name, err)
		}
		conns = append(conns, cn)
	}
	if err := bench.SleepCtx(ctx, settle); err != nil {
		return Result{}, err
	}
	before, err := readSnapshot(srv.Pid())
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	if err := bench.SleepCtx(ctx, window); err != nil {
		return Result{}, err
	}
	after, err := readSnapshot(srv.Pid())
	if err != nil {
		return Result{}, err
	}
	return resultOf(c, diff(before, after), time.Since(start)), nil
}

func resultOf(c Case, d delta, took time.Duration) Result {
	secs := took.Seconds()
	r := Result{Case: c.Name, Window: took, IdleConns: c.IdleConns, Threads: d.Threads, Woken: d.Woken,
		WakeupsPS: float64(d.Slices) / secs,
		CPUPct:    100 * float64(d.RunNs) / 1e9 / secs,
		TopPS:     float64(d.TopSlices) / secs,
	}
	r.WithinGoal = r.WakeupsPS <= MaxWakeupsPerSec && r.CPUPct <= MaxCPUPct
	return r
}

// roundTrip connects and asks for the version, so the server has accepted
// and served the connection before the window opens.
func roundTrip(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cn.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64)
	if _, err = cn.Write([]byte("version\r\n")); err == nil {
		_, err = cn.Read(buf)
	}
	if err != nil {
		cn.Close()
		return nil, err
	}
	cn.SetDeadline(time.Time{})
	return cn, nil
}

// fill stores n small items (noreply sets, then a round trip to see them
// all handled) from one client, which then leaves.
func fill(ctx context.Context, addr string, n int) error {
	cn, err := roundTrip(ctx, addr)
	if err != nil {
		return err
	}
	defer cn.Close()
	cn.SetDeadline(time.Now().Add(30 * time.Second))
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "set idle:%d 0 0 10 noreply\r\n0123456789\r\n", i)
	}
	b = append(b, "version\r\n"...)
	if _, err := cn.Write(b); err != nil {
		return err
	}
	buf := make([]byte, 64)
	got, err := cn.Read(buf)
	if err == nil && !strings.HasPrefix(string(buf[:got]), "VERSION ") {
		err = fmt.Errorf("after the sets: %q", buf[:got])
	}
	return err
}
