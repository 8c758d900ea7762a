//go:build unix

package procctl

import "testing"

func TestDescriptorLimitFor(t *testing.T) {
	for _, tc := range []struct {
		open      []int
		conns     int
		wantLimit int
	}{
		{nil, 5, 5},
		{[]int{0, 1, 2}, 5, 8},
		{[]int{0, 1, 2, 5, 9}, 5, 9},    // holes 3, 4, 6, 7, 8 are the five
		{[]int{0, 1, 2, 600}, 5, 8},     // a descriptor far above does not count
		{[]int{0, 1, 2, 3, 4, 8}, 3, 8}, // 5, 6, 7
		{[]int{0, 1, 2, 3, 4, 7}, 3, 9}, // 5, 6, 8
		{[]int{0, 2, 4, 6, 8}, 4, 8},    // 1, 3, 5, 7
		{[]int{0, 1, 2, 3}, 1, 5},
	} {
		if got := descriptorLimitFor(tc.open, tc.conns); got != tc.wantLimit {
			t.Errorf("descriptorLimitFor(%v, %d) = %d, want %d", tc.open, tc.conns, got, tc.wantLimit)
		}
	}
}
