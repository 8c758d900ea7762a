//go:build linux

package uring

import (
	"testing"

	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// TestPrefetchInputs: the receives of one completion batch reach the store
// hint before any is served.
func TestPrefetchInputs(t *testing.T) {
	needIOUring(t)
	enginetest.CheckPrefetchInputs(t, New)
}
