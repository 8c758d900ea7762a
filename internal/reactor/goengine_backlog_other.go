//go:build !linux

package reactor

import "net"

// goSetBacklog is a no-op where re-listening to change the backlog is not
// known to be safe; the net package's default (the system maximum) applies.
func goSetBacklog(ln net.Listener, backlog int) error { return nil }
