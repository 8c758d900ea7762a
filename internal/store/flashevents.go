package store

import (
	"strconv"
	"time"
)

// The compactor's log lines, memcached's LOG_SYSEVENTS kind (`watch
// sysevents`): compact_fraginfo at every look for a page, then
// compact_start, compact_read_start, compact_read_end and compact_end for
// a page compacted. While someone watches, the compactor also looks every
// ext_max_sleep, as memcached's does, so a watcher sees it settle; with
// nobody watching it waits for the background loop's kicks only.

// SetFlashEventHook installs fn, called with each sysevents line (without
// memcached's ts= and gid= header or the newline) from the compactor's
// goroutine; fn reports whether anyone still watches. nil removes it. It
// does nothing without a flash tier.
func (s *Store) SetFlashEventHook(fn func(line []byte) bool) {
	f := s.flash
	if f == nil {
		return
	}
	if fn == nil {
		f.events.Store(nil)
		return
	}
	f.events.Store(&fn)
	s.kickCompactor() // start the watched cadence
}

// flashEvent offers one line to the hook; false: nobody watches.
func (f *flashState) flashEvent(line []byte) bool {
	fn := f.events.Load()
	return fn != nil && (*fn)(line)
}

// watched reports whether a sysevents watcher wants the compactor's lines.
func (f *flashState) watched() bool {
	fn := f.events.Load()
	return fn != nil && (*fn)(nil)
}

// compactEvent formats "type=<typ> id=<page>" and the extra fields.
func compactEvent(typ string, page uint16, fields ...any) []byte {
	b := append([]byte("type="), typ...)
	b = append(b, " id="...)
	b = strconv.AppendUint(b, uint64(page), 10)
	for i := 0; i+1 < len(fields); i += 2 {
		b = append(b, ' ')
		b = append(b, fields[i].(string)...)
		b = append(b, '=')
		b = strconv.AppendUint(b, fields[i+1].(uint64), 10)
	}
	return b
}

// fragInfo is memcached's compact_fraginfo line: ext_max_frag and the
// bytes of a page it allows.
func fragInfo(maxFrag float64, pageSize uint64) []byte {
	b := append([]byte("type=compact_fraginfo ratio="), strconv.FormatFloat(maxFrag, 'f', 2, 64)...)
	b = append(b, " bytes="...)
	return strconv.AppendUint(b, uint64(float64(pageSize)*maxFrag), 10)
}

// watchedWait is the compactor's wait between looks while watched.
func (f *flashState) watchedWait() time.Duration {
	return max(time.Millisecond, time.Duration(f.knobs.load().MaxSleep)*time.Microsecond)
}
