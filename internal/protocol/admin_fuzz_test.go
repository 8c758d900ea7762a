package protocol

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
)

// FuzzAdmin drives admin command streams (lru_crawler, slabs, lru, stats
// subcommands, watch, extstore, shutdown, and the ASCII auth exchange when
// the first byte is odd) whole and split in two: no panic, and the same
// replies however the input arrived, except for metadump and watch, which
// memcached too refuses behind replies of the same read. cache_memlimit is
// left out: each one allocates the store anew.
func FuzzAdmin(f *testing.F) {
	for _, sc := range adminScripts {
		if len(sc.in) <= maxFuzzInput && !bytes.Contains([]byte(sc.in), []byte("cache_memlimit")) {
			f.Add([]byte(sc.in), uint16(len(sc.in)/3), false)
		}
	}
	f.Add([]byte("set a 0 0 9\r\nuser pass\r\nset b 0 0 1\r\nx\r\nlru_crawler metadump all\r\n"), uint16(9), true)
	f.Add([]byte("get a\r\nset a 0 0 3\r\nabcde\r\nset x 0 0 -1\r\n\r\n"), uint16(30), true)
	f.Add([]byte("slabs automove window 0\r\nslabs automove w 5 noreply\r\nslabs automove fr 0.5\r\nstats settings\r\n"), uint16(25), false)
	f.Add([]byte("set k 0 0 1\r\nv\r\ndebugitem ref k\r\ndebugitem lock k\r\ndebugitem unref reffed\r\ndebugitem unl k\r\n"), uint16(40), false)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, auth bool) {
		if len(data) > maxFuzzInput || bytes.Contains(data, []byte("cache_memlimit")) {
			return
		}
		env := func() *Env {
			e := newTinyStillEnv(t)
			e.ResumesPending = true
			e.Settings.ShutdownEnabled = true
			e.Settings.DebugTime = true // (debugtime and debugitem)
			if auth {
				e.ASCIIAuth, _ = parseASCIIAuth([]byte("user:pass\n"))
			}
			return e
		}
		whole := drive(t, NewSession(env()), data)
		i := int(cut) % (len(data) + 1)
		split := drive(t, NewSession(env()), data[:i], data[i:])
		if bytes.Contains(data, []byte("metadump")) || bytes.Contains(data, []byte("watch")) {
			return
		}
		whole.out, split.out = dropClockStats(whole.out), dropClockStats(split.out)
		if !cutsMayDiffer(split, whole) && split != whole {
			t.Fatalf("split at %d changed the replies\nwhole: %q\nsplit: %q", i, whole.out, split.out)
		}
	})
}

// clockStat matches the `stats` lines that change between two runs.
var clockStat = regexp.MustCompile(`STAT (rusage_user|rusage_system|uptime|time) [0-9.]+\r\n`)

// dropClockStats removes those stats from a text reply stream, or their
// packets from a binary one (whose STAT replies carry them as key and
// value): two runs read the process's CPU time and the clock apart.
func dropClockStats(s string) string {
	if len(s) == 0 || s[0] != binaryMagicResponse {
		return clockStat.ReplaceAllString(s, "")
	}
	var out strings.Builder
	for len(s) >= 24 && s[0] == binaryMagicResponse {
		keyLen := int(binary.BigEndian.Uint16([]byte(s[2:4])))
		n := 24 + int(binary.BigEndian.Uint32([]byte(s[8:12])))
		if n > len(s) || 24+keyLen > n {
			break
		}
		switch s[24 : 24+keyLen] {
		case "rusage_user", "rusage_system", "uptime", "time":
		default:
			out.WriteString(s[:n])
		}
		s = s[n:]
	}
	out.WriteString(s)
	return out.String()
}
