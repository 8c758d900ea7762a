package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSimultaneousGets: many clients each sending one get at the same
// moment, the load under which an engine serves one request from each of
// many connections per turn (and io_uring's reactor hints all their keys
// to the store before serving any), get every value right, round after
// round, and a get of a key set in between sees the new value.
func TestSimultaneousGets(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		p := startServer(t, tg)
		const clients, rounds = 16, 100
		type client struct {
			c net.Conn
			r *bufio.Reader
		}
		var cs []client
		for range clients {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			cs = append(cs, client{c, bufio.NewReader(c)})
		}
		value := func(key string, round int) string { return fmt.Sprintf("%s-v%d", key, round) }
		key := func(i int) string { return fmt.Sprintf("key-%02d-%s", i, strings.Repeat("k", 20)) }
		for i, cl := range cs {
			v := value(key(i), 0)
			fmt.Fprintf(cl.c, "set %s 0 0 %d\r\n%s\r\n", key(i), len(v), v)
			if line, err := cl.r.ReadString('\n'); err != nil || line != "STORED\r\n" {
				t.Fatalf("set: %q, %v", line, err)
			}
		}
		// lastSet is the round whose value a key holds in round r.
		lastSet := func(r int) int {
			if r < 9 {
				return 0
			}
			return r - (r-9)%10
		}
		for round := range rounds {
			// Client i asks for its neighbour's key; every tenth round
			// each rewrites its own key and asks for it on the same
			// connection instead (only that orders the two).
			target := func(i int) string { return key((i + 1) % clients) }
			if round%10 == 9 {
				target = key
				for i, cl := range cs {
					v := value(key(i), round)
					fmt.Fprintf(cl.c, "set %s 0 0 %d noreply\r\n%s\r\n", key(i), len(v), v)
				}
			}
			for i, cl := range cs {
				if _, err := fmt.Fprintf(cl.c, "get %s\r\n", target(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i, cl := range cs {
				k := target(i)
				v := value(k, lastSet(round))
				want := fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", k, len(v), v)
				got := make([]byte, len(want))
				if _, err := io.ReadFull(cl.r, got); err != nil || string(got) != want {
					t.Fatalf("round %d, client %d: %q, %v; want %q", round, i, got, err, want)
				}
			}
		}
	})
}
