package config

import (
	"strings"
	"testing"
)

// TestSlabChunkMaxUnits: -o slab_chunk_max is kilobytes, as memcached
// 1.6.24 and later read it, wherever memcached 1.6.45 starts with the
// value; bytes, with one warning, where 1.6.45 refuses it and 1.6.23 and
// earlier took it as bytes. `stats settings` shows bytes either way.
func TestSlabChunkMaxUnits(t *testing.T) {
	for _, c := range []struct {
		args  string
		chunk int
		warns bool
	}{
		{"-o slab_chunk_max=16", 16 << 10, false},
		{"-o slab_chunk_max=512", 512 << 10, false},
		{"-o slab_chunk_max=1024", 1 << 20, false},        // with the default -I 1m
		{"-I 1024 -o slab_chunk_max=1", 1024, false},      // memcached 1.6.45's stats.t
		{"-o no_modern,slab_chunk_max=4", 4 << 10, false}, // 1.6.45's binary.t
		{"-o slab_chunk_max=16384", 16384, true},          // 1.6.18's chunked-items.t
		{"-o no_modern,slab_chunk_max=4096", 4096, true},  // 1.6.18's binary.t
		{"-I 512k -o slab_chunk_max=16384", 16384, true},  // 1.6.18's item_size_max.t
		// 1.6.18's stats.t and item_size_max.t: 1024 KB is larger than
		// -I, which 1.6.45 refuses; 1024 bytes is what 1.6.18 took.
		{"-I 1024 -o slab_chunk_max=1024", 1024, true},
		{"-I 2k -o slab_chunk_max=2048", 2048, true},
		{"-o slab_chunk_max=16,no_chunked_items", 1 << 20, false},
		{"-o slab_chunk_max=16384,slab_chunk_max=16", 16 << 10, true},
	} {
		o, err := Parse(strings.Fields(c.args))
		if err != nil {
			t.Errorf("%s: %v", c.args, err)
			continue
		}
		warned := false
		for _, w := range o.Warnings {
			warned = warned || strings.Contains(w, "slab_chunk_max")
		}
		if o.Ext.SlabChunkMax != c.chunk || warned != c.warns {
			t.Errorf("%s: slab_chunk_max %d bytes, warned %v (%q); want %d, %v", c.args, o.Ext.SlabChunkMax, warned, o.Warnings, c.chunk, c.warns)
		}
	}
}

// TestSlabChunkMaxWarning: the warning says how the value was read, why,
// and how to write it for memcached 1.6.24 and later.
func TestSlabChunkMaxWarning(t *testing.T) {
	o, err := Parse([]string{"-I", "1024", "-o", "slab_chunk_max=1024"})
	if err != nil {
		t.Fatal(err)
	}
	want := "WARNING: -o slab_chunk_max=1024 is read as 1024 bytes, as memcached 1.6.23 and earlier read it; " +
		"memcached 1.6.24 and later take kilobytes, and refuse 1024 KB with -I 1024: write slab_chunk_max=1 for them."
	if len(o.Warnings) != 1 || o.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", o.Warnings, want)
	}
}

// TestNewerCommandLines: what memcached 1.6.45 reads differently from
// 1.6.18 on its command line.
func TestNewerCommandLines(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		check func(o *Options) bool
	}{
		// 1.6.32: blanks before a value are skipped, as a quoted "-l
		// 127.0.0.1" in a service file leaves them.
		{"quoted -l", []string{"-l 127.0.0.1", "-p 5"}, func(o *Options) bool { return o.Reactor.Listen == "127.0.0.1" && o.Reactor.Port == 5 }},
		{"blank -o", []string{"-o", "\tslab_chunk_max=16"}, func(o *Options) bool { return o.Ext.SlabChunkMax == 16<<10 }},
		{"blank --listen", []string{"--listen= ::1"}, func(o *Options) bool { return o.Reactor.Listen == "::1" }},
		// 1.6.40: worker_logbuf_size no longer falls through to slab_sizes.
		{"worker_logbuf_size", []string{"-o", "worker_logbuf_size=16"}, func(o *Options) bool {
			return o.Ext.SlabSizes == nil && o.Ext.Tuning.WorkerLogbufSize == 16<<10
		}},
		// 1.6.34: the automover's window is 10 by default.
		{"automove window default", nil, func(o *Options) bool { return o.Ext.Tuning.AutomoveWindow == 10 }},
		{"automove window", []string{"-o", "slab_automove_window=1800"}, func(o *Options) bool { return o.Ext.Tuning.AutomoveWindow == 1800 }},
		// 1.6.40: ext_page_size may follow ext_path.
		{"ext_page_size after ext_path", []string{"-o", "ext_path=/tmp/x:64m,ext_page_size=64"}, func(o *Options) bool { return true }},
	} {
		o, err := Parse(c.args)
		if err != nil || !c.check(o) {
			t.Errorf("%s: Parse(%q) = %+v, %v", c.name, c.args, o, err)
		}
	}
}
