package cpuset

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"", nil, false},
		{" \n", nil, false},
		{"0", []int{0}, false},
		{"3,1", []int{3, 1}, false}, // order kept: reactor 0 on CPU 3
		{"0-3", []int{0, 1, 2, 3}, false},
		{"4-5,0,2", []int{4, 5, 0, 2}, false},
		{"0-1\n", []int{0, 1}, false}, // as /proc prints it
		{"1, 2", []int{1, 2}, false},
		{"1,1", nil, true},
		{"0-2,1", nil, true},
		{"3-1", nil, true},
		{"-1", nil, true},
		{"a", nil, true},
		{"1,", nil, true},
		{"0-99999999", nil, true},
		{"16384", nil, true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 5}, "0-2,5"},
		{[]int{3, 1}, "3,1"},
		{[]int{5, 6, 0, 1}, "5-6,0-1"},
	}
	for _, tt := range tests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParse checks that whatever Parse accepts is distinct, in range, and
// survives a Format/Parse round trip unchanged (order included).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "3,1", "0-3,8", "1,1", "a-b", "0-16383"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := Parse(s)
		if err != nil {
			return
		}
		seen := make(map[int]bool)
		for _, c := range cpus {
			if c < 0 || c > MaxCPU || seen[c] {
				t.Fatalf("Parse(%q) = %v: out of range or repeated", s, cpus)
			}
			seen[c] = true
		}
		back, err := Parse(Format(cpus))
		if err != nil || !slices.Equal(back, cpus) {
			t.Fatalf("round trip of %v via %q = %v, %v", cpus, Format(cpus), back, err)
		}
	})
}
