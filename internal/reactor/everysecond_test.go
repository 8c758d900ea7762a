package reactor

import "testing"

func TestEverySecond(t *testing.T) {
	var e EverySecond
	if !e.Allow() {
		t.Fatal("first event refused")
	}
	for range 100 {
		if e.Allow() {
			// A second boundary may fall between the calls: one more is
			// allowed then, never two in the same second.
			if e.Allow() {
				t.Fatal("two events allowed in one second")
			}
		}
	}
}
