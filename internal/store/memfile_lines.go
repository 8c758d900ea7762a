package store

import "strconv"

// memcached's restart check writes its verdict on a memory file to stderr
// at every start with -e, whatever -v says: a missing metadata file, or the
// first saved setting this start differs from. Operators read those lines
// in the journal to learn why a warm restart came up empty, so a start
// writes them as memcached words them (RestartLines); gocached's own
// reason stays in RestoreReport.
const (
	restartNoMeta  = "[restart] no metadata save file, starting with a clean cache"
	restartMissing = "[restart] missing some metadata lines"
	restartInvalid = "[restart] failed to validate metadata, starting with a clean cache"
	// memcached 1.6.45 also prints "[restart] memory restart with
	// extstore not presently supported." and starts empty when extstore
	// is on; gocached restores flash items too (memfile_flash.go).
)

// settingMismatch is a saved setting the start's differs from, under the
// key memcached's metadata file names it by, with the saved value as
// memcached prints it.
type settingMismatch struct {
	key, old string
	why      string // gocached's wording, for RestoreReport
}

func (e *settingMismatch) Error() string { return e.why }

// lines are memcached's for it: the incompatible key ends its metadata
// loop early, so the required lines count as missing too.
func (e *settingMismatch) lines() []string {
	return []string{
		"[restart] restart incompatible due to setting for [" + e.key + "] [old value: " + e.old + "]",
		restartMissing, restartInvalid,
	}
}

// savedFactor is the saved -f as memcached's slab_config holds it (its
// default when none was given).
func savedFactor(f float64) string {
	if f <= 1 {
		f = defaultFactor
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// savedMinChunk is the saved -n as memcached's chunk_size holds it.
func savedMinChunk(n int) string {
	if n <= 0 {
		n = defaultMinChunk
	}
	return strconv.Itoa(n)
}

// Started is the start `uptime` counts from: Config.Started, or the one a
// restored memory file carried.
func (s *Store) Started() int64 { return s.started }

// RestartLines are memcached's stderr lines for how this start found its
// memory file; none without -e, or when the items were restored.
func (s *Store) RestartLines() []string { return s.restartLines }
