package integration

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// Shared by the tests that put a router (twemproxy, memcached's proxy) in
// front of three servers.

// startBackends starts n servers of target tg for a router to front, each
// its own disposable process, and returns them and their addresses.
func startBackends(t *testing.T, tg target, n int) ([]*testproc.Proc, []string) {
	t.Helper()
	backends := make([]*testproc.Proc, n)
	addrs := make([]string, n)
	for i := range backends {
		backends[i] = startDisposable(t, tg)
		addrs[i] = backends[i].Addr()
	}
	return backends, addrs
}

// fillThrough sets n keys, prefix:000 on, through c, each with a value that
// names label, and returns the keys and their values.
func fillThrough(t *testing.T, c *mcClient, prefix, label string, n int) ([]string, map[string]string) {
	t.Helper()
	keys := make([]string, n)
	want := make(map[string]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%03d", prefix, i)
		want[keys[i]] = fmt.Sprintf("%s-%d-%s", label, i, strings.Repeat("v", i%40))
		if err := c.set(keys[i], want[keys[i]]); err != nil {
			t.Fatalf("set %s through the router: %v", keys[i], err)
		}
	}
	return keys, want
}

// placement asks every backend directly which of keys it holds: each key
// must be on exactly one, with its value, and each backend's curr_items
// must count its keys and at most extra other items (set through the
// router besides keys); no backend may hold less than a tenth of them. It
// returns each backend's keys and each key's backend.
func placement(t *testing.T, backends []*testproc.Proc, keys []string, want map[string]string, extra int) ([][]string, map[string]int) {
	t.Helper()
	owner := map[string]int{}
	held := make([][]string, len(backends))
	for b, p := range backends {
		direct := &mcClient{addr: p.Addr()}
		for i := 0; i < len(keys); i += 100 {
			got, err := direct.get(keys[i:min(i+100, len(keys))]...)
			if err != nil {
				direct.close()
				t.Fatalf("get from backend%d: %v", b, err)
			}
			for _, v := range got {
				if prev, dup := owner[v.key]; dup {
					t.Fatalf("%s is on backend%d and backend%d", v.key, prev, b)
				}
				if v.value != want[v.key] {
					t.Fatalf("backend%d holds %s = %q, want %q", b, v.key, v.value, want[v.key])
				}
				owner[v.key] = b
				held[b] = append(held[b], v.key)
			}
		}
		direct.close()
		items, _ := strconv.Atoi(dialRaw(t, p.Addr()).stats("")["curr_items"])
		if items < len(held[b]) || items > len(held[b])+extra {
			t.Errorf("backend%d: curr_items %d, but %d keys found on it", b, items, len(held[b]))
		}
	}
	counts := make([]int, len(held))
	for b := range held {
		counts[b] = len(held[b])
	}
	t.Logf("keys per backend: %v", counts)
	if len(owner) != len(keys) {
		t.Fatalf("%d of %d keys found on a backend", len(owner), len(keys))
	}
	for b, n := range counts {
		if n < len(keys)/10 {
			t.Fatalf("backend%d holds %d of %d keys: not spread (per backend %v)", b, n, len(keys), counts)
		}
	}
	return held, owner
}
