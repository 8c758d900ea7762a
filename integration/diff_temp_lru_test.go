package integration

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestTemporaryTTL checks memcached's TEMP LRU (-o temporary_ttl) on the
// real binary, and on memcached to show the assertions are its behaviour:
// with -m 2, an unread item stored with a ttl under temporary_ttl outlives
// 100 long-lived items of its size that evict each other; `lru temp_ttl -1`
// turns it off at run time.
func TestTemporaryTTL(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg, "-m", "2", "-o", "temporary_ttl=61")
		c := dialRaw(t, srv.Addr())
		if s := c.stats("settings"); s["temp_lru"] != "yes" || s["temporary_ttl"] != "61" {
			t.Fatalf("stats settings: temp_lru %q, temporary_ttl %q; want yes, 61", s["temp_lru"], s["temporary_ttl"])
		}
		value := strings.Repeat("B", 66560)
		c.expect("set canary 0 30 66560\r\n"+value+"\r\n", "STORED\r\n")
		for i := range 100 {
			c.expect(fmt.Sprintf("set key%d 0 3600 66560\r\n%s\r\n", i, value), "STORED\r\n")
		}
		if ev, _ := strconv.Atoi(c.stats("")["evictions"]); ev == 0 {
			t.Fatal("no evictions: the store was not filled")
		}
		if n := sumItems(c.stats("items"), "number_temp"); n != 1 {
			t.Fatalf("number_temp totals %d, want 1 (the canary)", n)
		}
		c.expect("get canary\r\n", "VALUE canary 0 66560\r\n", value+"\r\n", "END\r\n")

		c.expect("lru temp_ttl -1\r\n", "OK\r\n")
		if s := c.stats("settings"); s["temp_lru"] != "no" || s["temporary_ttl"] != "61" {
			t.Fatalf("after lru temp_ttl -1: temp_lru %q, temporary_ttl %q; want no, 61", s["temp_lru"], s["temporary_ttl"])
		}
		for k := range c.stats("items") {
			if strings.HasSuffix(k, ":number_temp") {
				t.Fatalf("%s still listed with the TEMP LRU off", k)
			}
		}
	})
}

// sumItems adds up one per-class field of `stats items`.
func sumItems(items map[string]string, field string) int {
	total := 0
	for k, v := range items {
		if strings.HasSuffix(k, ":"+field) {
			n, _ := strconv.Atoi(v)
			total += n
		}
	}
	return total
}
