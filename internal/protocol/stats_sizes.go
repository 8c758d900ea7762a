package protocol

import (
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// memcached's item size histogram: `stats sizes` lists the items per
// 32-byte size bucket while tracking is on (-o track_sizes), else says it
// is disabled. memcached 1.6.25 removed `stats sizes_enable` and
// `sizes_disable` (not thread safe, its protocol.txt says): they are
// unknown groups, as in memcached 1.6.45.

// appendSizes writes the histogram's lines, or sizes_status disabled.
func appendSizes(w *statWriter, st *store.Store) {
	if st == nil || !st.Sizes(func(size int, items int32) {
		w.int(strconv.Itoa(size), int64(items))
	}) {
		w.str("sizes_status", "disabled")
	}
}
