//go:build linux

package testbed

import (
	"strings"
	"testing"
)

const sampleNetstat = `TcpExt: SyncookiesSent BusyPollRxPackets TCPOrigDataSent
TcpExt: 0 147021 5
IpExt: InNoRoutes InOctets
IpExt: 3 123456789012
`

func TestParseNetstat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]uint64
		wantErr string
	}{
		{"sample", sampleNetstat, map[string]uint64{
			"TcpExt:SyncookiesSent": 0, "TcpExt:BusyPollRxPackets": 147021, "TcpExt:TCPOrigDataSent": 5,
			"IpExt:InNoRoutes": 3, "IpExt:InOctets": 123456789012}, ""},
		{"empty", "", map[string]uint64{}, ""},
		{"signed snmp counter", "Tcp: RtoMin MaxConn\nTcp: 200 -1\n", map[string]uint64{"Tcp:RtoMin": 200, "Tcp:MaxConn": 1<<64 - 1}, ""},
		{"no values", "TcpExt: A B\n", nil, "without a value line"},
		{"count mismatch", "TcpExt: A B\nTcpExt: 1\n", nil, "2 names but 1 values"},
		{"section mismatch", "TcpExt: A\nIpExt: 1\n", nil, "mismatched"},
		{"bad number", "TcpExt: A\nTcpExt: x\n", nil, "TcpExt:A"},
	}
	for _, tt := range tests {
		got, err := ParseNetstat(strings.NewReader(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %s = %d, want %d", tt.name, k, got[k], v)
			}
		}
	}
}

func FuzzParseNetstat(f *testing.F) {
	f.Add(sampleNetstat)
	f.Add("TcpExt: A\nTcpExt: 1\n")
	f.Add("Tcp: MaxConn\nTcp: -1\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseNetstat(strings.NewReader(s))
		if err == nil && m == nil {
			t.Fatal("nil map without error")
		}
	})
}

const sampleSoftirqs = `                    CPU0       CPU1
          HI:          1          0
       TIMER:     460154     479137
      NET_TX:         12         40
      NET_RX:     138204       4611
`

func TestParseSoftirqs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		netRx   []uint64
		wantErr string
	}{
		{"sample", sampleSoftirqs, []uint64{138204, 4611}, ""},
		{"one cpu", "CPU0\nNET_RX: 7\n", []uint64{7}, ""},
		{"empty", "", nil, "empty"},
		{"short line", "CPU0 CPU1\nNET_RX: 7\n", nil, "1 counts for 2 CPUs"},
		{"no colon", "CPU0\nNET_RX 7\n", nil, "bad line"},
		{"bad count", "CPU0\nNET_RX: x\n", nil, "NET_RX"},
	}
	for _, tt := range tests {
		got, err := ParseSoftirqs(strings.NewReader(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		rx := got["NET_RX"]
		if len(rx) != len(tt.netRx) {
			t.Errorf("%s: NET_RX %v, want %v", tt.name, rx, tt.netRx)
			continue
		}
		for i := range rx {
			if rx[i] != tt.netRx[i] {
				t.Errorf("%s: NET_RX %v, want %v", tt.name, rx, tt.netRx)
			}
		}
	}
}

func FuzzParseSoftirqs(f *testing.F) {
	f.Add(sampleSoftirqs)
	f.Add("CPU0\nNET_RX: 7\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSoftirqs(strings.NewReader(s))
		if err != nil {
			return
		}
		width := -1
		for name, v := range m {
			if width >= 0 && len(v) != width {
				t.Fatalf("%s has %d counts, others %d", name, len(v), width)
			}
			width = len(v)
		}
	})
}

func TestReadHostCounters(t *testing.T) {
	rx, err := NetRxSoftirqs()
	if err != nil {
		t.Fatal(err)
	}
	if len(rx) == 0 {
		t.Fatal("no CPUs in NET_RX")
	}
	m, err := ReadNetstat("")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m["TcpExt:BusyPollRxPackets"]; !ok {
		t.Fatalf("own netns netstat lacks BusyPollRxPackets: %d keys", len(m))
	}
	s, err := ReadSNMP("")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s["Tcp:ActiveOpens"]; !ok {
		t.Fatalf("snmp lacks Tcp:ActiveOpens")
	}
}

func BenchmarkParseNetstat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNetstat(strings.NewReader(sampleNetstat)); err != nil {
			b.Fatal(err)
		}
	}
}
