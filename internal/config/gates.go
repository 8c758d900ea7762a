package config

import "github.com/gocached/gocached/internal/protocol"

// Gates are memcached's flags that switch protocol features on or
// off: -A -F -X -W -Y, the size-class shape -f -n, and -D.
type Gates struct {
	Shutdown, NoFlush, NoDump, NoWatch bool
	AuthFile                           string
	Factor                             float64
	MinChunk                           int
	Delimiter                          byte // 0: -D not given
}

// setDelimiter reads -D: memcached takes the first character of its value.
func (g *Gates) setDelimiter(v string, given bool) error {
	if !given {
		return nil
	}
	if v == "" {
		return mcFail("No delimiter specified")
	}
	g.Delimiter = v[0]
	return nil
}

// Apply puts the gates into the Settings the Sessions obey.
func (g *Gates) Apply(s *protocol.Settings) {
	s.ShutdownEnabled = g.Shutdown
	s.FlushDisabled = g.NoFlush
	s.DumpDisabled = g.NoDump
	s.WatchDisabled = g.NoWatch
	s.GrowthFactor = g.Factor
	s.ChunkSize = g.MinChunk
	s.DetailDelimiter = g.Delimiter
}
