//go:build !linux

package portable

import "net"

// setBacklog is a no-op where re-listening to change the backlog is not
// known to be safe; the net package's default (the system maximum) applies.
func setBacklog(ln net.Listener, backlog int) error { return nil }
