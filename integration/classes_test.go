package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestItemClassesMatchMemcached stores values of sizes around class
// boundaries, with and without client flags, and compares which slab class
// holds each (`stats items`) and that class's chunk size (`stats slabs`)
// with memcached's, for the command lines that shape the classes: -n, -f,
// -I, -C, -o slab_sizes and memcached's worker_logbuf_size, which sets the
// slab sizes too.
func TestItemClassesMatchMemcached(t *testing.T) {
	sizes := []int{0, 1, 36, 37, 38, 50, 100, 150, 500, 1000, 1900, 5000, 20000, 100000, 500000, 600000}
	for _, flags := range [][]string{
		nil, {"-C"}, {"-n", "100", "-f", "2"}, {"-I", "2m"},
		{"-o", "slab_sizes=100-200-400"}, {"-o", "worker_logbuf_size=64"},
		{"-o", "no_modern"},
	} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			classes := func(tg target) map[string]string {
				c := dialRaw(t, startServer(t, tg, flags...).Addr())
				for i, n := range sizes {
					for _, f := range []int{0, 7} {
						key := fmt.Sprintf("k%d-%d", i, f)
						c.expect(fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", key, f, n, strings.Repeat("v", n)), "STORED\r\n")
					}
				}
				out := map[string]string{}
				items := c.stats("items")
				slabs := c.stats("slabs")
				for name, v := range items {
					if id, ok := strings.CutSuffix(strings.TrimPrefix(name, "items:"), ":number"); ok && v != "0" {
						out["class "+id+" items"] = v
						out["class "+id+" chunk_size"] = slabs[id+":chunk_size"]
					}
				}
				return out
			}
			want := classes(referenceTarget)
			runTargets(t, engineTargets, func(t *testing.T, tg target) {
				got := classes(tg)
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %q, memcached %q", k, got[k], v)
					}
				}
				for k, v := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: %q, memcached has none", k, v)
					}
				}
			})
		})
	}
}
