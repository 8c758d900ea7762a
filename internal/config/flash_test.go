package config

import (
	"math"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

func TestFlashOptions(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name string
		o    string
		want func(f *Flash) bool
	}{
		{"memcached's defaults", "ext_path=/tmp/a:1g", func(f *Flash) bool {
			e := f.Engine
			return len(e.Files) == 1 && e.Files[0].Size == 1<<30 && e.PageSize == 64*mb &&
				e.WbufSize == 4*mb && e.Threads == 1 && e.IODepth == 1 && f.ItemSize == 512 &&
				f.ItemAge == math.MaxUint32 && f.LowTTL == 0 && f.RecacheRate == 2000 &&
				f.MaxSleep == time.Second && f.Policy.MaxFrag == 0.8 && !f.Policy.DropUnread &&
				f.Policy.CompactUnder == 1 && f.Policy.DropUnder == 1 // 1 % of 16 pages, at least 1
		}},
		{"1 % of the LAST file's pages", "ext_path=/tmp/a:64m,ext_path=/tmp/b:64g", func(f *Flash) bool {
			return len(f.Engine.Files) == 2 && f.Policy.CompactUnder == 10 && f.Policy.DropUnder == 10
		}},
		{"sizes in megabytes, last wins", "ext_page_size=32,ext_path=/tmp/a:1g,ext_page_size=16,ext_wbuf_size=8", func(f *Flash) bool {
			return f.Engine.PageSize == 16*mb && f.Engine.WbufSize == 8*mb
		}},
		{"compact_under left at 0 overrides drop_under", "ext_path=/tmp/a:64g,ext_drop_under=50", func(f *Flash) bool {
			return f.Policy.CompactUnder == 10 && f.Policy.DropUnder == 10
		}},
		{"both given", "ext_path=/tmp/a:64g,ext_compact_under=7,ext_drop_under=3", func(f *Flash) bool {
			return f.Policy.CompactUnder == 7 && f.Policy.DropUnder == 3
		}},
		{"item rules", "ext_path=/tmp/a:1g,ext_item_size=1024,ext_item_age=60,ext_low_ttl=30,ext_recache_rate=5", func(f *Flash) bool {
			return f.ItemSize == 1024 && f.ItemAge == 60 && f.LowTTL == 30 && f.RecacheRate == 5
		}},
		{"threads, depth, sleep, frag, drop_unread", "ext_path=/tmp/a:1g,ext_threads=4,ext_io_depth=2,ext_max_sleep=500,ext_max_frag=0.5,ext_drop_unread", func(f *Flash) bool {
			return f.Engine.Threads == 4 && f.Engine.IODepth == 2 && f.MaxSleep == 500*time.Microsecond &&
				f.Policy.MaxFrag == 0.5 && f.Policy.DropUnread
		}},
		{"bucket of a file", "ext_path=/tmp/a:1g:lowttl", func(f *Flash) bool {
			return f.Engine.Files[0].FreeBucket == extstore.BucketLowTTL
		}},
		{"page size wraps as memcached's 32-bit field", "ext_path=/tmp/a:1g,ext_page_size=4096", func(f *Flash) bool {
			return f.Engine.PageSize == 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse([]string{"-o", tt.o})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			f := o.Ext.Flash
			if f == nil || !tt.want(f) {
				t.Errorf("-o %s: got %+v", tt.o, f)
			}
		})
	}
	o, err := Parse([]string{"-o", "ext_item_size=100"})
	if err != nil || o.Ext.Flash != nil {
		t.Errorf("ext_* without ext_path: Flash %+v, err %v; want none", o.Ext.Flash, err)
	}
}
