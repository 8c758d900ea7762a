package server

import (
	"testing"

	"github.com/gocached/gocached/internal/protocol"
)

// groupsOnly is an engine that knows the "conns" group only.
type groupsOnly struct{ protocol.Server }

func (groupsOnly) GroupStats(group string, add func(name, value string)) bool {
	if group != "conns" {
		return false
	}
	add("1:state", "conn_listening")
	return true
}

// TestBuildStatsGroup: `stats gocached` names the build ("none" without a
// label); every other group is the engine's.
func TestBuildStatsGroup(t *testing.T) {
	for _, c := range []struct{ label, want string }{{"v1.2-3-gabc", "v1.2-3-gabc"}, {"", "none"}} {
		s := withBuildStats{groupsOnly{}, Build{Version: "1.6.45", Label: c.label}}
		var lines []string
		add := func(name, value string) { lines = append(lines, name+" "+value) }
		if !s.GroupStats("gocached", add) || len(lines) != 1 || lines[0] != "build "+c.want {
			t.Errorf("label %q: stats gocached = %q", c.label, lines)
		}
		lines = nil
		if !s.GroupStats("conns", add) || len(lines) != 1 || s.GroupStats("gocachedx", add) {
			t.Errorf("label %q: the engine's groups: %q", c.label, lines)
		}
	}
}
