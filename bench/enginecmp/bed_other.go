//go:build !linux

package enginecmp

// bedHandle: the NAPI testbed exists only on Linux.
type bedHandle struct{}
