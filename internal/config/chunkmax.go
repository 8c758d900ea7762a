package config

import "fmt"

// -o slab_chunk_max changed unit in memcached 1.6.24: kilobytes since,
// bytes before (1.6.18 documented kilobytes and read bytes). 1.6.24 and
// later refuse a value above 1024 ("slab_chunk_max must be specified in
// kilobytes."). A memcached.conf written for the older releases must not
// turn into a cache whose every store fails, or into one that does not
// start, so gocached reads kilobytes wherever memcached 1.6.45 would start
// with the value, and bytes, with a warning, where 1.6.45 refuses it and
// the older releases took it.

// maxChunkMaxKB is the largest value memcached 1.6.24 and later take.
const maxChunkMaxKB = 1 << 10

// readSlabChunkMax is one slab_chunk_max value in bytes (extChecks has
// refused what does not parse and what is not positive); asBytes reports
// a value read in the old unit: above maxChunkMaxKB, or 1024 where 1024 KB
// is refused by the checks after memcached's loop (checkSlabChunkMax) and
// 1024 bytes is not (memcached 1.6.18's t/ files start with "-I 1024 -o
// slab_chunk_max=1024"). Smaller values are kilobytes whatever follows: a
// chunk under the smallest -I, 1 KB, is not what an old command line meant,
// and the checks refuse it loudly, as 1.6.45 does.
func readSlabChunkMax(value string, itemSize int) (chunk int64, asBytes bool) {
	n, _ := cStrtol(value)
	if n > maxChunkMaxKB {
		return n, true
	}
	if kb := n << 10; n < minItemSize || chunkMaxFits(kb, itemSize) || !chunkMaxFits(n, itemSize) {
		return kb, false
	}
	return n, true
}

// chunkMaxFits reports whether memcached's checks after its loop take
// chunk as slab_chunk_max with -I itemSize.
func chunkMaxFits(chunk int64, itemSize int) bool {
	item := int64(itemSize)
	return chunk > 0 && chunk <= item && item%chunk == 0 && slabPageSize%chunk == 0
}

// slabChunkMaxWarnings are the warnings, for stderr, of the
// slab_chunk_max values read as bytes.
func slabChunkMaxWarnings(settings []extSetting, itemSize int) []string {
	var out []string
	for _, s := range settings {
		if s.name != "slab_chunk_max" {
			continue
		}
		chunk, asBytes := readSlabChunkMax(s.value, itemSize)
		if !asBytes {
			continue
		}
		why := "memcached 1.6.24 and later take kilobytes and refuse a value above 1024"
		if chunk == maxChunkMaxKB {
			why = fmt.Sprintf("memcached 1.6.24 and later take kilobytes, and refuse %d KB with -I %d", chunk, itemSize)
		}
		fix := fmt.Sprintf("write slab_chunk_max=%d for them", chunk>>10)
		if chunk%1024 != 0 || chunk>>10 > maxChunkMaxKB {
			fix = "they cannot set this chunk size"
		}
		out = append(out, fmt.Sprintf("WARNING: -o slab_chunk_max=%s is read as %d bytes, as memcached 1.6.23 and earlier read it; %s: %s.",
			s.value, chunk, why, fix))
	}
	return out
}
