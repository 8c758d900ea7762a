//go:build linux

package scenario

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gocached/gocached/kernel/testbed"
)

// TestServerSpec: each server runs pinned, in the server namespace, on the
// fixed port, probed at the server address; only gocached with --poll-mode
// gets the scenario, and memcached runs as nobody when we are root.
func TestServerSpec(t *testing.T) {
	bed := &testbed.Bed{Name: "x", ServerNS: "x-srv", ClientNS: "x-cli"}
	o := QuickOptions()
	o.GocachedBin, o.MemcachedBin = "/bin/gocached", "/bin/memcached"
	for _, tc := range []struct {
		server   string
		pollMode bool
		bin      string
		want     []string // in Args
		not      []string
	}{
		{Gocached, true, o.GocachedBin, []string{"--poll-mode suspend20", "-t " + o.GocachedThreads}, nil},
		{Gocached, false, o.GocachedBin, []string{"-t " + o.GocachedThreads}, []string{"--poll-mode"}},
		{Memcached, true, o.MemcachedBin, []string{"-t "}, []string{"--poll-mode"}},
	} {
		sp := serverSpec(bed, &o, tc.server, "suspend20", tc.pollMode)
		args := strings.Join(sp.Args, " ")
		if sp.Name != tc.server || sp.Path != tc.bin || sp.NetNS != bed.ServerNS ||
			!slices.Equal(sp.Wrap, []string{"taskset", "-c", o.ServerCPUs}) ||
			sp.Addr != testbed.ServerIP+":11211" || sp.Dial == nil {
			t.Errorf("%s: spec %+v", tc.server, sp)
		}
		for _, w := range append(tc.want, "-l "+testbed.ServerIP, "-p 11211") {
			if !strings.Contains(args, w) {
				t.Errorf("%s poll-mode %v: args %q lack %q", tc.server, tc.pollMode, args, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(args, n) {
				t.Errorf("%s poll-mode %v: args %q hold %q", tc.server, tc.pollMode, args, n)
			}
		}
		if tc.server == Memcached && os.Geteuid() == 0 && !strings.Contains(args, "-u nobody") {
			t.Errorf("memcached as root without -u nobody: %q", args)
		}
	}
}
