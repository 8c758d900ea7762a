package enginetest

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// readBufMemLimit: -o read_buf_mem_limit holds on every engine as memcached's
// t/conn-limits.t asks. Whatever the engine's worker count, 1 MB gives each
// worker at most 64 blocks of 13 response objects, fewer than the 1,500 a
// 1,500-key get or 1,500 pipelined mg (one read, under -R 5000) need: the
// get answers memcached's error and the connection stays usable; the mg
// pipeline closes its connection with nothing sent.
func readBufMemLimit(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{ReqsPerEvent: 5000, ReadBufMemLimit: 1 << 20})
	c := s.Dial(t)
	c.Send("get " + strings.TrimSuffix(strings.Repeat("foo ", 1500), " ") + "\r\n")
	c.Expect("SERVER_ERROR out of memory writing get response\r\n")
	c.Send("get foo\r\n")
	c.Expect("END\r\n")

	p := s.Dial(t)
	p.Send(strings.Repeat("mg foo v\r\n", 1500))
	_ = p.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Bytes the engine had not read when it closed make the close a reset.
	if n, err := p.R.Read(make([]byte, 64)); n != 0 || !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("pipelined mg past the limit: read %d bytes, %v; want the connection closed without a reply", n, err)
	}
	if got := c.Stats("")["response_obj_oom"]; got != "2" {
		t.Errorf("response_obj_oom %s, want 2", got)
	}
}
