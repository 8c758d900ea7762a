package server

import (
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// initialMallocEnv is memcached's test-suite hook (read by release builds
// too): a number of bytes the server counts as allocated already.
const initialMallocEnv = "T_MEMD_INITIAL_MALLOC"

// initialMalloc reads initialMallocEnv as memcached does (safe_strtoll: a
// bad or negative value is ignored) and logs its use, since it shrinks the
// memory items get.
func initialMalloc(log *slog.Logger) int64 {
	s, ok := os.LookupEnv(initialMallocEnv)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	log.Info("test hook: memory counted as allocated already", "env", initialMallocEnv, "bytes", v)
	return v
}
