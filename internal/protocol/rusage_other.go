//go:build !unix

package protocol

// rusage is unavailable here; `stats` reports zero CPU time.
func rusage() (user, sys int64) { return 0, 0 }
