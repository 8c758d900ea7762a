package server

import (
	"io"
	"log/slog"
	"testing"
)

func TestInitialMallocEnv(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		val  string
		set  bool
		want int64
	}{
		{"", false, 0},
		{"4294967328", true, 4294967328},
		{" 1024 ", true, 1024},
		{"-5", true, 0},
		{"4k", true, 0},
		{"", true, 0},
	} {
		if c.set {
			t.Setenv(initialMallocEnv, c.val)
		}
		if got := initialMalloc(log); got != c.want {
			t.Errorf("%s=%q (set %v): %d, want %d", initialMallocEnv, c.val, c.set, got, c.want)
		}
	}
}
