package enginetest

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/extstore"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

// openFlash is a flash tier on small pages in the test's directory, closed
// after the store (cleanups run last first).
func openFlash(t testing.TB) *store.FlashConfig {
	t.Helper()
	const page, wbuf = 1 << 20, 256 << 10
	cfg := extstore.DefaultConfig(extstore.FileSpec{Path: filepath.Join(t.TempDir(), "ext"), Size: 16 * page})
	cfg.PageSize, cfg.WbufSize, cfg.TestAlign = page, wbuf, wbuf
	eng, err := extstore.Open(cfg)
	if err != nil {
		t.Fatalf("extstore.Open: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	return &store.FlashConfig{Engine: eng, ItemSize: 512, ItemAge: math.MaxUint32, RecacheRate: 0}
}

// flashReads: a get whose value is on flash does not hold up the engine,
// and the replies of a pipeline mixing RAM and flash hits keep their
// order, for a multiget, for gets and mg in one batch, and across
// connections served at the same time.
func flashReads(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{Flash: true})
	c := s.Dial(t)
	value := func(k string) string { return strings.Repeat(k, 1000) }
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		c.Send(fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", k, len(value(k)), value(k)))
		c.Expect("STORED\r\n")
	}
	for _, k := range []string{"b", "d"} {
		if !s.Env.Store.MoveToFlash([]byte(k)) {
			t.Fatalf("%s not moved to flash", k)
		}
	}
	// Filler moved after them fills their write buffer, so b and d are
	// read from the file, not served from a buffer in memory at once.
	filler := strings.Repeat("f", 60<<10)
	for i := range 8 {
		c.Send(fmt.Sprintf("set filler%d 0 0 %d\r\n%s\r\n", i, len(filler), filler))
		c.Expect("STORED\r\n")
		if !s.Env.Store.MoveToFlash(fmt.Appendf(nil, "filler%d", i)) {
			t.Fatalf("filler%d not moved to flash", i)
		}
	}
	var want []string
	for _, k := range keys {
		want = append(want, fmt.Sprintf("VALUE %s 0 %d\r\n", k, len(value(k))), value(k)+"\r\n")
	}
	c.Send("get a b c d\r\n")
	c.Expect(append(want, "END\r\n")...)

	c.Send("get d\r\nmg b v\r\nget a\r\nmn\r\n")
	c.Expect(want[6], want[7], "END\r\n", fmt.Sprintf("VA %d\r\n", len(value("b"))), value("b")+"\r\n",
		want[0], want[1], "END\r\n", "MN\r\n")

	// Two clients, each waiting on its own read.
	other := s.Dial(t)
	c.Send("get b\r\n")
	other.Send("get d a\r\n")
	c.Expect(want[2], want[3], "END\r\n")
	other.Expect(want[6], want[7], want[0], want[1], "END\r\n")
	if got := c.Stats("")["get_extstore"]; got == "0" || got == "" {
		t.Errorf("get_extstore = %q after flash reads", got)
	}
}
