//go:build !linux

package reactor

// AckNow does nothing where TCP_QUICKACK (Linux's) does not exist: the
// kernel's delayed ACK stands.
func AckNow(fd int) {}
