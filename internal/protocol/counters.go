package protocol

import "sync/atomic"

// moreCounters are the totals the meta and binary protocols add to `stats`.
type moreCounters struct {
	metaCmds   atomic.Uint64 // cmd_meta: memcached counts only `me` here
	authCmds   atomic.Uint64 // auth_cmds: SASL authentication attempts
	authErrors atomic.Uint64 // auth_errors: the failed ones
}

func (c *moreCounters) reset() {
	c.metaCmds.Store(0)
	c.authCmds.Store(0)
	c.authErrors.Store(0)
}
