// Package flash is a flash-tier workload for memcached-protocol servers: a
// working set several times the server's memory is written, the server is
// left to move values to its ext_path files, and then gets with Zipf keys
// are measured, split into hits served from RAM and hits served from flash.
package flash

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// Stats is one `stats` reply: values by name.
type Stats map[string]string

// Int is the counter name as an integer, and whether the server reports it
// as one. A server without a flash tier has no extstore_* counters at all.
func (s Stats) Int(name string) (int64, bool) {
	v, ok := s[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// Delta is after's counter less before's; 0 when either lacks it.
func Delta(before, after Stats, name string) int64 {
	a, ok1 := after.Int(name)
	b, ok2 := before.Int(name)
	if !ok1 || !ok2 {
		return 0
	}
	return a - b
}

// Counters the report reads.
const (
	statCmdGet         = "cmd_get"
	statGetHits        = "get_hits"
	statGetExtstore    = "get_extstore"          // hits whose value was read from flash
	statGetMissExt     = "miss_from_extstore"    // flash reads that found no valid value
	statRecached       = "recache_from_extstore" // flash hits moved back to RAM
	statObjectsWritten = "extstore_objects_written"
	statObjectsUsed    = "extstore_objects_used"
	statBytesWritten   = "extstore_bytes_written"
	statEvictions      = "evictions"
)

// stats reads the server's general stats over a fresh connection.
func readStats(addr string) (Stats, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return readStatsOn(c)
}

func readStatsOn(c net.Conn) (Stats, error) {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	_, vals, err := testproc.ReadStats(bufio.NewReader(c))
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return Stats(vals), nil
}
