package protocol

import (
	"strconv"
	"testing"
)

func TestAppendDecimal(t *testing.T) {
	check := func(v uint64) {
		t.Helper()
		if got, want := string(appendDecimal([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendDecimal(%d) = %q, want %q", v, got, want)
		}
	}
	for v := range uint64(20000) {
		check(v)
	}
	for _, v := range []uint64{99999, 100000, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
		check(v)
	}
}
