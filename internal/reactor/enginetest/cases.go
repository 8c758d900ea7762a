package enginetest

import (
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
)

// Case is one behaviour every engine must show, tested through the
// reactor.Engine interface alone.
type Case struct {
	Name string
	Run  func(t *testing.T, f reactor.Factory)
}

// Cases are the conformance suite: protocol, accounting, flow control and
// shutdown. internal/reactor's conformance_test.go runs them all against
// every engine.
var Cases = []Case{
	{"protocol/round_trip", roundTrip},
	{"protocol/pipeline", pipeline},
	{"protocol/split_at_every_byte", splitEveryByte},
	{"protocol/large_value", largeValue},
	{"protocol/yields_under_R", yieldsUnderR},
	{"protocol/long_get_line", longGetLine},
	{"accounting/counts_as_memcached", countsAsMemcached},
	{"accounting/stats_conns", statsConns},
	{"accounting/stats_conns_states", statsConnsStates},
	{"accounting/wildcard_both_families", wildcardBothFamilies},
	{"accounting/conn_limit", connLimit},
	{"accounting/unix_socket", unixSocket},
	{"accounting/unix_socket_spread", unixSocketSpread},
	{"accounting/unix_socket_closed_client", unixClosedClient},
	{"accounting/unix_socket_left_at_stop", unixSocketLeftAtStop},
	{"accounting/stats_reset", statsReset},
	{"flow/backpressure", backpressure},
	{"flow/fairness_latency", fairnessLatency},
	{"flow/read_buf_mem_limit", readBufMemLimit},
	{"flow/idle_timeout", idleTimeout},
	{"flow/idle_timeout_whole_seconds", idleTimeoutWholeSeconds},
	{"flow/nagle_client", nagleClient},
	{"stream/metadump_slow_reader", metadumpSlowReader},
	{"stream/watch_wakeup", watchWakeup},
	{"stream/flash_reads", flashReads},
	{"shutdown/graceful", gracefulShutdown},
	{"shutdown/graceful_pipeline", gracefulShutdownPipeline},
	{"shutdown/deadline", shutdownDeadline},
	{"shutdown/half_close_and_quit", halfCloseAndQuit},
}

func roundTrip(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	c.Send("set k 5 0 5\r\nhello\r\n")
	c.Expect("STORED\r\n")
	c.Send("get k\r\n")
	c.Expect("VALUE k 5 5\r\n", "hello\r\n", "END\r\n")
	c.Send("append k 0 0 1\r\n!\r\nincr n 1\r\n")
	c.Expect("STORED\r\n", "NOT_FOUND\r\n")
	c.Send("set n 0 0 1\r\n9\r\nincr n 1\r\ndelete k\r\nget k\r\n")
	c.Expect("STORED\r\n", "10\r\n", "DELETED\r\n", "END\r\n")
	c.Send("version\r\n")
	if v := c.Line(); !strings.HasPrefix(v, "VERSION ") {
		t.Fatalf("version: %q", v)
	}
	c.Send("bogus\r\n")
	c.Expect("ERROR\r\n")
}

func pipeline(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	var req strings.Builder
	for i := range 300 {
		k := "k" + itoa(i)
		req.WriteString("set " + k + " 0 0 " + itoa(len(k)) + "\r\n" + k + "\r\nget " + k + "\r\n")
	}
	c.Send(req.String())
	for i := range 300 {
		k := "k" + itoa(i)
		c.Expect("STORED\r\n", "VALUE "+k+" 0 "+itoa(len(k))+"\r\n", k+"\r\n", "END\r\n")
	}
}

// splitEveryByte sends a script one byte per write: the engine must
// reassemble commands and data blocks from any segmentation.
func splitEveryByte(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	script := "set k 0 0 5\r\nhel\r\n\r\nget k\r\ndelete k\r\n"
	for i := range len(script) {
		c.Send(script[i : i+1])
	}
	c.Expect("STORED\r\n", "VALUE k 0 5\r\n", "hel\r\n", "\r\n", "END\r\n", "DELETED\r\n")
}

func largeValue(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	v := strings.Repeat("0123456789abcdef", 900<<10/16)
	c.Send("set big 0 0 " + itoa(len(v)) + "\r\n" + v + "\r\n")
	c.Expect("STORED\r\n")
	c.Send("get big\r\n")
	c.Expect("VALUE big 0 "+itoa(len(v))+"\r\n", v+"\r\n", "END\r\n")
}

func yieldsUnderR(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{ReqsPerEvent: 2})
	c := s.Dial(t)
	c.Send("set k 0 0 1\r\nx\r\n" + strings.Repeat("get k\r\n", 50))
	c.Expect("STORED\r\n")
	for range 50 {
		c.Expect("VALUE k 0 1\r\n", "x\r\n", "END\r\n")
	}
	if got := s.Eng.ServerStats().ConnYields; got == 0 {
		t.Errorf("conn_yields = 0 after 51 pipelined requests at -R 2")
	}
}

// longGetLine: a get line past the multiget bound (-I, 1 MiB by default)
// is served as memcached serves it, its replies past the output budget
// included: the line is served as it arrives, with pauses for the output.
func longGetLine(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	v := strings.Repeat("v", 20000)
	for i := range 100 {
		c.Send("set hit-" + itoa(i) + " 0 0 " + itoa(len(v)) + " noreply\r\n" + v + "\r\n")
	}
	var line strings.Builder
	line.WriteString("get")
	for i := range 60000 {
		line.WriteString(" missing-key-" + itoa(i))
		if i%500 == 0 {
			line.WriteString(" hit-" + itoa(i/500%100))
		}
	}
	line.WriteString("\r\nversion\r\n")
	if line.Len() < 1<<20 {
		t.Fatalf("line of %d bytes is not past the bound", line.Len())
	}
	c.Send(line.String())
	for i := range 60000 {
		if i%500 == 0 {
			c.Expect("VALUE hit-"+itoa(i/500%100)+" 0 "+itoa(len(v))+"\r\n", v+"\r\n")
		}
	}
	c.Expect("END\r\n")
	if l := c.Line(); !strings.HasPrefix(l, "VERSION ") {
		t.Fatalf("after the long get: %q", l)
	}
}
