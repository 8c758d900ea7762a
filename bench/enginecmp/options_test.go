package enginecmp

import (
	"slices"
	"testing"
	"time"
)

func TestParseShapes(t *testing.T) {
	tests := []struct {
		in   string
		want []Shape
		ok   bool
	}{
		{"64x1", []Shape{{64, 1}}, true},
		{"64x1, 8x4,16x16", []Shape{{64, 1}, {8, 4}, {16, 16}}, true},
		{"8x4,", []Shape{{8, 4}}, true},
		{"", nil, false},
		{"64", nil, false},
		{"0x1", nil, false},
		{"1x0", nil, false},
		{"4001x1", nil, false},
		{"1x1025", nil, false},
		{"axb", nil, false},
		{"-1x2", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseShapes(tt.in)
		if (err == nil) != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("ParseShapes(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseShapes(f *testing.F) {
	for _, s := range []string{"64x1,8x4", "1x1", "x", ",,", "9999999999999x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shapes, err := ParseShapes(s)
		if err != nil {
			return
		}
		for _, sh := range shapes {
			if sh.Conns < 1 || sh.Conns > maxShapeConns || sh.Depth < 1 || sh.Depth > 1024 {
				t.Fatalf("%q gave out-of-range shape %v", s, sh)
			}
			if again, err := ParseShapes(sh.String()); err != nil || again[0] != sh {
				t.Fatalf("%v does not round-trip: %v %v", sh, again, err)
			}
		}
	})
}

func TestValidate(t *testing.T) {
	ok := DefaultOptions()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	withUring := DefaultOptions()
	withUring.Targets = []string{Epoll, Uring, Memcached}
	if err := withUring.Validate(); err != nil {
		t.Errorf("uring target: %v", err)
	}
	withFloorAndAlt := DefaultOptions()
	withFloorAndAlt.Targets = []string{Floor, UringFloor, Epoll, Epoll + AltSuffix, Uring + AltSuffix, Memcached}
	withFloorAndAlt.GocachedAltBin = "/some/other/gocached"
	if err := withFloorAndAlt.Validate(); err != nil {
		t.Errorf("floor and -alt targets: %v", err)
	}
	for name, mutate := range map[string]func(*Options){
		"alt without its build": func(o *Options) { o.Targets = []string{Epoll, Epoll + AltSuffix} },
		"alt of memcached": func(o *Options) {
			o.Targets, o.GocachedAltBin = []string{Memcached + AltSuffix}, "/some/other/gocached"
		},
		"no targets":   func(o *Options) { o.Targets = nil },
		"bad target":   func(o *Options) { o.Targets = []string{"redis"} },
		"no shapes":    func(o *Options) { o.Shapes = nil },
		"zero runs":    func(o *Options) { o.Runs = 0 },
		"short time":   func(o *Options) { o.Time = time.Millisecond },
		"no records":   func(o *Options) { o.Records = 0 },
		"negative cpu": func(o *Options) { o.ServerCPU = -1 },
	} {
		o := DefaultOptions()
		mutate(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTargetKinds(t *testing.T) {
	tests := []struct {
		target        string
		gocached, alt bool
		engine        string
	}{
		{Epoll, true, false, Epoll},
		{Epoll + AltSuffix, true, true, Epoll},
		{Uring + AltSuffix, true, true, Uring},
		{Go, true, false, Go},
		{Memcached, false, false, Memcached},
		{Floor, false, false, Floor},
		{Floor + AltSuffix, false, false, Floor},
		{UringFloor, false, false, UringFloor},
	}
	for _, tt := range tests {
		if IsGocached(tt.target) != tt.gocached || IsAlt(tt.target) != tt.alt ||
			(tt.gocached && Engine(tt.target) != tt.engine) {
			t.Errorf("%s: gocached %v alt %v engine %q; want %v %v %q", tt.target, IsGocached(tt.target),
				IsAlt(tt.target), Engine(tt.target), tt.gocached, tt.alt, tt.engine)
		}
	}
}
