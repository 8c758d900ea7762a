package store

import (
	"fmt"

	"github.com/gocached/gocached/internal/extstore"
)

// Warm restart with a flash tier, which memcached 1.6.45 refuses ("memory
// restart with extstore not presently supported"): the RAM headers of
// flash items hold Locations, so the engine's pages must come back with
// them, as they were when the headers were saved.
//
// SaveState has the engine write its buffers and describe its pages in
// use (extstore.State), and keeps that in FILE.meta rather than in a file
// of its own: the rename of FILE.meta is then the one point at which the
// RAM and the flash pages are vouched for together, and the removal of
// FILE.meta at start withdraws both at once. A sidecar file could be left
// from another save than the metadata, after a crash between the two.
//
// At start (the server opens the engine with extstore.Config.Keep when
// there is a memory file, so its files are not truncated yet) a restore
// hands the State to the engine, which refuses it for other ext_path
// files, page or buffer sizes, or files changed since the save. Each
// flash header found in RAM is then adopted (counted live on its page) or,
// when the engine refused the State or the location is not on a saved
// page, dropped: its item is gone, never read from a page that may hold
// something else. Whenever the pages are not restored, the engine
// discards them (truncating its files), as a start without -e would.

// flashRestore is what a restore did with the flash tier.
type flashRestore struct {
	keep    bool   // the engine took the saved pages: adopt headers
	why     string // why it did not, when there were pages to take
	kept    int    // flash headers adopted
	dropped int    // flash headers dropped
}

// saveFlash writes the engine's buffers and returns its pages in use, nil
// without a flash tier. The background loop and the compactor have
// stopped.
func (s *Store) saveFlash() (*extstore.State, error) {
	if s.flash == nil {
		return nil, nil
	}
	st, err := s.flash.cfg.Engine.Save()
	if err != nil {
		return nil, fmt.Errorf("store: flash pages: %w", err)
	}
	return &st, nil
}

// savedFlashNote is the save report's part about the flash tier: the
// gauges the next start's extstore_* stats should show again.
func (s *Store) savedFlashNote() string {
	if s.flash == nil {
		return ""
	}
	st := s.flash.cfg.Engine.Stats()
	return fmt.Sprintf("; flash: %d objects, %d bytes on %d pages", st.ObjectsUsed, st.BytesUsed, st.PagesUsed)
}

// startFlashRestore decides, before the RAM pages are walked, whether the
// flash headers in them can be kept.
func (s *Store) startFlashRestore(m *memfileMeta) {
	fr := flashRestore{}
	e := s.slabs.ext
	switch {
	case m.Flash == nil:
		// Nothing saved: no flash header can be trusted (none is
		// expected, unless an older version saved them).
		fr.why = "no flash pages were saved"
	case e == nil:
		fr.why = "no ext_path is configured now"
	default:
		if err := e.Restore(*m.Flash); err != nil {
			fr.why = err.Error()
		} else {
			fr.keep = true
		}
	}
	s.flashBack = fr
}

// adoptFlashHeader reports whether the flash header r stays: its location
// is on a restored page, now counted live there.
func (s *Store) adoptFlashHeader(r rec) bool {
	fr := &s.flashBack
	if fr.keep && s.slabs.ext.Adopt(r.flashLoc()) {
		fr.kept++
		return true
	}
	fr.dropped++
	return false
}

// finishFlashRestore settles the engine after a restore that walked every
// page (ok), or discards its pages.
func (s *Store) finishFlashRestore(ok bool) error {
	e := s.slabs.ext
	if e == nil {
		return nil
	}
	if ok && s.flashBack.keep {
		e.Settle()
		return nil
	}
	s.flashBack.keep = false
	return e.Discard()
}

// flashNote is the restore report's part about the flash tier.
func (s *Store) flashNote() string {
	fr := s.flashBack
	switch {
	case fr.keep:
		st := s.slabs.ext.Stats()
		note := fmt.Sprintf("; flash: %d items kept on %d pages", fr.kept, st.PagesUsed)
		if fr.dropped > 0 {
			note += fmt.Sprintf(", %d dropped (their pages were reclaimed before the save)", fr.dropped)
		}
		return note
	case fr.dropped > 0:
		return fmt.Sprintf("; flash: %d items dropped: %s", fr.dropped, fr.why)
	case s.slabs.ext != nil && fr.why != "" && s.cfg.Flash != nil:
		return "; flash: starting empty: " + fr.why
	}
	return ""
}

// FlashRestoreWarning is a line for the log when a warm restart dropped
// flash items it had saved ("" otherwise): the ext_path files or sizes
// changed, or the files were written since the save.
func (s *Store) FlashRestoreWarning() string {
	fr := s.flashBack
	if fr.keep || fr.dropped == 0 {
		return ""
	}
	return fmt.Sprintf("memory file %s: %d items whose values were on flash dropped: %s", s.memfile.path, fr.dropped, fr.why)
}
