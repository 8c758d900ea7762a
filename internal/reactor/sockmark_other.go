//go:build !linux

package reactor

import (
	"log/slog"
	"syscall"
)

// MarkControl is -o sock_cookie_id for the net package's
// ListenConfig.Control: SO_MARK is Linux's, so elsewhere a mark is
// reported and the socket left unmarked.
func MarkControl(mark uint32) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error {
		if mark != 0 {
			slog.Warn("-o sock_cookie_id needs Linux's SO_MARK; socket left unmarked")
		}
		return nil
	}
}
