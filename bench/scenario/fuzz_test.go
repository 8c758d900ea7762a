//go:build linux

package scenario

import (
	"strings"
	"testing"
)

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (memcached) S 1 1234 1234 0 -1 4194560 130 0 0 0 250 75 0 0 20 0 4 0 100 0 0"))
	f.Add([]byte("1 ((x)) R 1 2 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ticks, err := ParseProcStat(b); err != nil && ticks != 0 {
			t.Fatalf("error %v with %d ticks", err, ticks)
		}
	})
}

func FuzzParseSystemCPU(f *testing.F) {
	f.Add("cpu  100 2 30 4000 5 6 7 8 9 10\nintr 1\n")
	f.Add("cpu 1 2 3\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseSystemCPU(strings.NewReader(s))
		if err == nil && c.Total() < c.Busy() {
			t.Fatalf("total %d below busy %d", c.Total(), c.Busy())
		}
	})
}

func FuzzParseLoads(f *testing.F) {
	for _, s := range []string{"5000,MAX", "25%,50%,90%", "1e4", "max"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loads, err := ParseLoads(s)
		if err != nil {
			return
		}
		var parts []string
		for _, l := range loads {
			if l.QPS < 0 || l.Fraction < 0 || l.Fraction > 1 {
				t.Fatalf("%q gave load %+v", s, l)
			}
			parts = append(parts, l.String())
		}
		again, err := ParseLoads(strings.Join(parts, ","))
		if err != nil || len(again) != len(loads) {
			t.Fatalf("%q: reparse of %v: %v", s, parts, err)
		}
	})
}
