package reactor

// NAPIKnobs are the per-NAPI settings `stats reactors` reports next to each
// reactor's NAPI ID, as read back from the kernel at stats time.
type NAPIKnobs struct {
	DeferHardIRQs       uint64
	GROFlushTimeoutNs   uint64
	IRQSuspendTimeoutNs uint64
}

// ReactorStatsOptions add the NAPI-control lines (issue 4) to `stats
// reactors`: the poll mode name and a reader of a NAPI's knobs (internal/napi
// provides one; reactor does not depend on it).
type ReactorStatsOptions struct {
	PollMode string
	// ReadKnobs returns the knobs of NAPI id; nil leaves the knob lines out.
	ReadKnobs func(napiID uint32) (NAPIKnobs, error)
}

type reactorStatsSetter interface {
	setReactorStats(ReactorStatsOptions)
}

// SetReactorStats installs opts on e if e is an epoll engine built by New and
// reports whether it did. It is safe while e serves.
func SetReactorStats(e Engine, opts ReactorStatsOptions) bool {
	s, ok := e.(reactorStatsSetter)
	if ok {
		s.setReactorStats(opts)
	}
	return ok
}
