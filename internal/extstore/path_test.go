package extstore

import (
	"errors"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		arg    string
		want   FileSpec
		errMsg string
	}{
		{"/ssd/e:64m", FileSpec{Path: "/ssd/e", Size: 64 << 20}, ""},
		{"/ssd/e:2G", FileSpec{Path: "/ssd/e", Size: 2 << 30}, ""},
		{"/ssd/e:1t", FileSpec{Path: "/ssd/e", Size: 1 << 40}, ""},
		{"/ssd/e:1P", FileSpec{Path: "/ssd/e", Size: 1 << 50}, ""},
		{"/ssd/e:64m:lowttl", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketLowTTL}, ""},
		{"/ssd/e:64m:compact", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketCompact}, ""},
		{"/ssd/e:64m:chunked", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketChunked}, ""},
		{"/ssd/e:64m:coldcompact", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketColdCompact}, ""},
		{"/ssd/e:64m:old", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketOld}, ""},
		{"/ssd/e:64m:default", FileSpec{Path: "/ssd/e", Size: 64 << 20}, ""},
		// strtok skips empty fields and stops after the third.
		{"::/ssd/e:::64m::old:junk", FileSpec{Path: "/ssd/e", Size: 64 << 20, FreeBucket: BucketOld}, ""},
		// atoi: leading space, trailing junk, nothing to read.
		{"/e: 12xm", FileSpec{Path: "/e", Size: 12 << 20}, ""},
		{"/e:abcm", FileSpec{Path: "/e", Size: 0}, ""},
		{"/e:m", FileSpec{Path: "/e", Size: 0}, ""},
		{"/e:-1m", FileSpec{Path: "/e", Size: 1<<64 - 1<<20}, ""},
		{"/e", FileSpec{}, msgNoSize},
		{"", FileSpec{}, msgNoSize},
		{":64m", FileSpec{}, msgNoSize},
		{"/e:64", FileSpec{}, msgBadUnit},
		{"/e:64x", FileSpec{}, msgBadUnit},
		{"/e:64m:foo", FileSpec{}, "Unknown extstore bucket: foo"},
	}
	for _, tt := range tests {
		got, err := ParsePath(tt.arg)
		if tt.errMsg != "" {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.errMsg {
				t.Errorf("ParsePath(%q) error = %v, want %q", tt.arg, err, tt.errMsg)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePath(%q) = %+v, %v; want %+v", tt.arg, got, err, tt.want)
		}
	}
}

func TestCAtoiSaturates(t *testing.T) {
	for s, want := range map[string]int32{
		"2147483647": 1<<31 - 1, "2147483648": -1 << 31, "99999999999999999999": -1,
		"-99999999999999999999": 0, "  +7": 7, "\t-3z": -3, "": 0,
	} {
		if got := cAtoi(s); got != want {
			t.Errorf("cAtoi(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/a:64m", "/a:1g:old", "::x::9T", "/a:", "/a:-5p:lowttl:z", " :m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		spec, err := ParsePath(arg)
		if err != nil {
			return
		}
		if spec.Path == "" || len(spec.Path) > len(arg) || spec.Size%(1<<20) != 0 || spec.FreeBucket >= BucketCount {
			t.Fatalf("ParsePath(%q) = %+v", arg, spec)
		}
		for _, c := range spec.Path {
			if c == ':' {
				t.Fatalf("ParsePath(%q): path %q holds a colon", arg, spec.Path)
			}
		}
		if spec.Size>>20 > 1<<31-1 {
			return
		}
		again, err := ParsePath(spec.String())
		if err != nil || again != spec {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", arg, spec, spec.String(), again, err)
		}
	})
}
