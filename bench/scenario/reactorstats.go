//go:build linux

package scenario

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// reactorGauges are `stats reactors` fields that are settings or levels,
// not counters: a delta of them means nothing.
var reactorGauges = map[string]bool{
	"napi_id": true, "cpu": true, "conns": true, "max_batch": true, "busy_poll_usecs": true,
	"busy_poll_budget": true, "prefer_busy_poll": true, "max_events": true,
	"defer_hard_irqs": true, "gro_flush_timeout": true, "irq_suspend_timeout": true,
}

// parseReactorStats sums each numeric counter of `stats reactors`
// ("STAT reactor:N:name value") over the reactors. Fields it does not know
// are kept too, so counters the server adds later show up in results.json
// without a change here.
func parseReactorStats(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "END" {
			return out, nil
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "STAT" {
			continue
		}
		parts := strings.Split(f[1], ":")
		if len(parts) != 3 || parts[0] != "reactor" || reactorGauges[parts[2]] {
			continue
		}
		v, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue // text fields (poll_mode)
		}
		out[parts[2]] += v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("stats reactors: no END")
}

// reactorStatsTimeout bounds one read of gocached's reactor counters.
const reactorStatsTimeout = 30 * time.Second

// readReactorStats asks the server at addr for `stats reactors` over a
// connection made by dial (inside the client namespace). One extra
// connection per reading; its few packets are noise next to a run's.
func readReactorStats(ctx context.Context, dial func(context.Context, string) (net.Conn, error), addr string) (map[string]uint64, error) {
	// A hang guard, not a speed limit: beside a busy loop per CPU a 2 s
	// bound failed the testbed test (the dial timed out).
	ctx, cancel := context.WithTimeout(ctx, reactorStatsTimeout)
	defer cancel()
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(reactorStatsTimeout))
	if _, err := io.WriteString(c, "stats reactors\r\n"); err != nil {
		return nil, err
	}
	return parseReactorStats(c)
}
