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
// -I, -C, -o slab_sizes, and worker_logbuf_size, which set the slab sizes
// too up to memcached 1.6.39 (1.6.45 reads it as the log buffer's size).
func TestItemClassesMatchMemcached(t *testing.T) {
	sizes := []int{0, 1, 36, 37, 38, 50, 100, 150, 500, 1000, 1900, 5000, 20000, 100000, 500000, 600000}
	for _, flags := range [][]string{
		nil, {"-C"}, {"-n", "100", "-f", "2"}, {"-I", "2m"},
		{"-o", "slab_sizes=100-200-400"}, {"-o", "worker_logbuf_size=64"},
		{"-o", "no_modern"},
	} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			classes := func(tg target, flags ...string) map[string]string {
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
			want := classes(referenceTarget, flags...)
			runTargets(t, engineTargets, func(t *testing.T, tg target) {
				got := classes(tg, flags...)
				sameAsMemcached(t, got, want)
			})
		})
	}
}

// TestClassCmdSetMatchesMemcached: memcached counts cmd_set per class for
// every store whose data arrived (stored or not: a failed add, replace or
// cas), in the class of the item it allocated for that data (for an
// append, the appended bytes'), and the allocation gives the class its
// page, so `stats slabs` lists it even when nothing was stored. Every
// engine's classes, their cmd_set and the total as memcached's.
func TestClassCmdSetMatchesMemcached(t *testing.T) {
	script := []string{
		"set k 0 0 1\r\nx\r\n", "add k 0 0 1\r\ny\r\n", "replace nok 0 0 300\r\n" + strings.Repeat("r", 300) + "\r\n",
		"cas k 0 0 1 999\r\nz\r\n", "set big 0 0 2000\r\n" + strings.Repeat("b", 2000) + "\r\n",
		"append big 0 0 5\r\nttttt\r\n", "prepend nok 0 0 40\r\n" + strings.Repeat("p", 40) + "\r\n",
	}
	counts := func(tg target) map[string]string {
		c := dialRaw(t, startServer(t, tg).Addr())
		for _, req := range script {
			c.send(req)
			c.line()
		}
		out := map[string]string{}
		for name, v := range c.stats("slabs") {
			if strings.HasSuffix(name, ":cmd_set") || name == "active_slabs" {
				out[name] = v
			}
		}
		out["cmd_set"] = c.stats("")["cmd_set"]
		return out
	}
	want := counts(referenceTarget)
	runTargets(t, engineTargets, func(t *testing.T, tg target) {
		got := counts(tg)
		sameAsMemcached(t, got, want)
	})
}

// sameAsMemcached reports every name whose value differs between got and
// memcached's want, or that only one of them has.
func sameAsMemcached(t *testing.T, got, want map[string]string) {
	t.Helper()
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
}
