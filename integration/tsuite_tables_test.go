package integration

// Owners of the fixes named in the known failures of each release.
const (
	ownProtocol = "internal/protocol"
	ownStore    = "internal/store"
	ownReactor  = "internal/reactor"
	ownServer   = "internal/server"
	// ownNone: a memcached mechanism gocached documents it does not have,
	// or a memcached-debug-only hook; nothing to fix.
	ownNone = "none (documented difference)"
	// ownUpstream: gocached answers as memcached 1.6.45, the reference,
	// where 1.6.18's suite expects the older reply; the entry names the
	// upstream change.
	ownUpstream = "none (1.6.45 behaviour)"
)
