package reactor

import "testing"

func TestUnixSpreaderDealsInTurn(t *testing.T) {
	for _, tc := range []struct {
		reactors int
		want     []int
	}{
		{0, []int{0, 0, 0}},
		{1, []int{0, 0, 0}},
		{2, []int{0, 1, 0, 1}},
		{3, []int{0, 1, 2, 0, 1}},
	} {
		var s UnixSpreader
		for i, w := range tc.want {
			if got := s.Next(tc.reactors); got != w {
				t.Errorf("%d reactors, connection %d: reactor %d, want %d", tc.reactors, i, got, w)
			}
		}
	}
}
