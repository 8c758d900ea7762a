package server

import (
	"io"
	"log/slog"
)

// NewLogger maps memcached's verbosity onto slog levels: quiet shows
// warnings and errors, -v adds info, -vv and more add debug.
func NewLogger(w io.Writer, verbosity int) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case verbosity >= 2:
		level = slog.LevelDebug
	case verbosity == 1:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
