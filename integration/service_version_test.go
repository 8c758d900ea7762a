package integration

import (
	"encoding/binary"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// memcachedVersion is the memcached release gocached follows, as its
// `version` command and `stats` give it.
const memcachedVersion = "1.6.45"

// strictVersion is how clients read the VERSION reply: major.minor.patch
// and nothing else (a Node.js client threw inside its socket handler on
// "1.6.18-gocached" and took its process down).
var strictVersion = regexp.MustCompile(`^VERSION (\d+)\.(\d+)\.(\d+)\r\n$`)

// TestVersionIsMemcachedsNumber: every engine answers the text and binary
// version requests and `stats` with memcached 1.6.45's bare number; the
// build is named by -V and `stats gocached` instead.
func TestVersionIsMemcachedsNumber(t *testing.T) {
	out, err := testproc.Command(gocachedBinary(t), "-V").Output()
	if err != nil || !strings.HasPrefix(string(out), "gocached "+memcachedVersion) {
		t.Errorf("-V: %q, %v; want it to name gocached and %s", out, err, memcachedVersion)
	}
	forEachEngine(t, func(t *testing.T, tg target) {
		c := dialRaw(t, startServer(t, tg).Addr())
		v := c.roundTrip("version\r\n")
		if !strictVersion.MatchString(v) || v != "VERSION "+memcachedVersion+"\r\n" {
			t.Errorf("version: %q, want VERSION %s", v, memcachedVersion)
		}
		if got := c.stats("")["version"]; got != memcachedVersion {
			t.Errorf("stats version: %q, want %s", got, memcachedVersion)
		}
		if got := c.stats("gocached"); got["build"] == "" {
			t.Errorf("stats gocached: %v, want its build", got)
		}

		// The binary protocol's VERSION (opcode 0x0b) carries the same.
		b := dialRaw(t, c.conn.RemoteAddr().String())
		req := make([]byte, 24)
		req[0], req[1] = 0x80, 0x0b
		b.send(string(req))
		b.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		hdr := make([]byte, 24)
		if _, err := io.ReadFull(b.r, hdr); err != nil || hdr[0] != 0x81 || hdr[1] != 0x0b {
			t.Fatalf("binary VERSION: % x, %v", hdr, err)
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[8:12]))
		if _, err := io.ReadFull(b.r, body); err != nil || string(body) != memcachedVersion {
			t.Errorf("binary VERSION body: %q, %v; want %s", body, err, memcachedVersion)
		}
	})
}
