package probe

import (
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	tests := []struct {
		in      string
		want    [3]int
		wantErr bool
	}{
		{"6.18.44-fc-v1098", [3]int{6, 18, 44}, false},
		{"6.13.0-rc1+", [3]int{6, 13, 0}, false},
		{"4.12", [3]int{4, 12, 0}, false},
		{"5.10.0-28-amd64", [3]int{5, 10, 0}, false},
		{"6.9.0.1", [3]int{6, 9, 0}, false},
		{"6", [3]int{}, true},
		{"", [3]int{}, true},
		{"linux", [3]int{}, true},
		{"6..1", [3]int{}, true},
	}
	for _, tt := range tests {
		v, err := ParseRelease(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRelease(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got := [3]int{v.Major, v.Minor, v.Patch}; !tt.wantErr && got != tt.want {
			t.Errorf("ParseRelease(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseRelease(f *testing.F) {
	for _, s := range []string{"6.18.44-fc-v1098", "4.12", "6.13.0-rc1+", "", "1.2.3.4.5", "9999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRelease(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 {
			t.Fatalf("ParseRelease(%q) = negative %+v", s, v)
		}
		if !v.AtLeast(v.Major, v.Minor) {
			t.Fatalf("%+v not AtLeast itself", v)
		}
	})
}

func TestAtLeastAndMissing(t *testing.T) {
	tests := []struct {
		v            Version
		major, minor int
		want         bool
	}{
		{Version{Major: 6, Minor: 13}, 6, 13, true},
		{Version{Major: 6, Minor: 12, Patch: 99}, 6, 13, false},
		{Version{Major: 7, Minor: 0}, 6, 13, true},
		{Version{Major: 5, Minor: 19}, 6, 9, false},
		{Version{Major: 4, Minor: 12}, 4, 12, true},
	}
	for _, tt := range tests {
		if got := tt.v.AtLeast(tt.major, tt.minor); got != tt.want {
			t.Errorf("%v.AtLeast(%d,%d) = %v, want %v", tt.v, tt.major, tt.minor, got, tt.want)
		}
	}
	missing := []struct {
		v    Version
		want int
	}{
		{Version{Major: 6, Minor: 18}, 0},
		{Version{Major: 6, Minor: 13}, 0},
		{Version{Major: 6, Minor: 12}, 2}, // both 6.13 pieces
		{Version{Major: 6, Minor: 8}, 3},  // plus EPIOCSPARAMS
		{Version{Major: 6, Minor: 1}, 4},  // plus napi-get
		{Version{Major: 5, Minor: 4}, 5},  // plus preferred busy poll
		{Version{Major: 3, Minor: 10}, 6}, // everything
	}
	for _, tt := range missing {
		if got := len(tt.v.Missing()); got != tt.want {
			t.Errorf("%v.Missing() has %d features, want %d", tt.v, got, tt.want)
		}
		r := kernelResult(tt.v)
		if r.Supported != (tt.want == 0) || r.Sentence == "" {
			t.Errorf("kernelResult(%v) = %+v", tt.v, r)
		}
		if tt.want > 0 && !strings.Contains(r.Sentence, "upgrade") {
			t.Errorf("kernelResult(%v) sentence gives no fix: %q", tt.v, r.Sentence)
		}
	}
}

func TestKernelVersionRunning(t *testing.T) {
	v, err := Uname()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major < 2 {
		t.Fatalf("implausible running kernel %+v", v)
	}
	r := KernelVersion()
	if r.Err != nil || r.Sentence == "" || !strings.Contains(r.Sentence, v.Release) {
		t.Fatalf("KernelVersion() = %+v", r)
	}
	t.Logf("%s", r)
}
