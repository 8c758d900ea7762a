package protocol

import (
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// memcached's item size histogram: `stats sizes` lists the items per
// 32-byte size bucket while tracking is on (-o track_sizes, or `stats
// sizes_enable` at run time), else says it is disabled.

// appendSizes writes the histogram's lines, or sizes_status disabled.
func appendSizes(w *statWriter, st *store.Store) {
	if st == nil || !st.Sizes(func(size int, items int32) {
		w.int(strconv.Itoa(size), int64(items))
	}) {
		w.str("sizes_status", "disabled")
	}
}

// appendSizesSwitch turns tracking on or off and writes memcached's
// answer: sizes_status enabled or disabled, or, enabling under -C, an
// error (run-time tracking needs CAS uniques).
func appendSizesSwitch(b []byte, st *store.Store, enable bool) []byte {
	w := statWriter{b: b}
	switch {
	case !enable:
		if st != nil {
			st.DisableSizes()
		}
		w.str("sizes_status", "disabled")
	case st == nil || !st.EnableSizes():
		w.str("sizes_status", "error")
		w.str("sizes_error", "cas_support_disabled")
	default:
		w.str("sizes_status", "enabled")
	}
	return w.b
}
