package server

import "github.com/gocached/gocached/internal/protocol"

// ownStatsGroup is `stats gocached`: gocached's own group, which names the
// build. The protocol's version is memcached's bare number (Build.Version),
// so this is where a client or an operator tells gocached apart; memcached
// answers ERROR to it. A group of its own, because memcached's t/stats.t
// counts the lines of a bare `stats`.
const ownStatsGroup = "gocached"

// noBuildLabel is the build stat of a binary built without a label.
const noBuildLabel = "none"

// withBuildStats is the engine as `stats` sees it, plus `stats gocached`.
type withBuildStats struct {
	protocol.Server
	build Build
}

func (s withBuildStats) GroupStats(group string, add func(name, value string)) bool {
	if group != ownStatsGroup {
		return s.Server.GroupStats(group, add)
	}
	label := s.build.Label
	if label == "" {
		label = noBuildLabel
	}
	add("build", label)
	return true
}
