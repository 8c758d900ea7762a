package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocached/gocached/internal/extstore"
)

// memcached's checks of -o suboption values, with its messages: status 1
// for those it makes while reading each suboption, 64 (checkSlabChunkMax,
// checkExtAfterLoop) for those after its getopt loop. gocached has none of
// the mechanisms most of them tune, but refuses what memcached refuses, so
// that a command line starts on both or on neither.

// extCheck is memcached's reading of one suboption's value.
type extCheck struct {
	// missing is memcached's message when the suboption has no "=value";
	// "" when the value is optional.
	missing string
	// check refuses a value memcached refuses; nil: any value.
	check func(name, value string) error
}

// Messages memcached uses for many suboptions.
const (
	missingArg     = "Missing %s argument"
	missingNumeric = "Missing numeric argument for %s"
	missingValue   = "Missing %s value"
)

var extChecks = map[string]extCheck{
	"hashpower":            {missingNumeric, func(_, v string) error { return checkHashPower(v) }},
	"slab_automove":        {"", atoiRange(0, 2, "slab_automove must be between 0 and 2")},
	"slab_automove_ratio":  {missingArg, atofCheck(func(f float64) bool { return f > 0 && f <= 1 }, "slab_automove_ratio must be > 0 and < 1")},
	"slab_automove_window": {missingArg, atoiRange(3, 1800, "slab_automove_window must be > 2 and < 1800")},
	"tail_repair_time":     {missingNumeric, atoiRange(10, 1<<31-1, "Cannot set tail_repair_time to less than 10 seconds")},
	"hash_algorithm":       {missingArg, checkHashAlgorithm},
	"lru_crawler_sleep":    {missingValue, atoiRange(0, 1000000, "LRU crawler sleep must be between 0 and 1 second")},
	"lru_crawler_tocrawl": {missingValue, func(_, v string) error {
		if _, ok := cStrtoul(v); !ok {
			return mcFail("lru_crawler_tocrawl takes a numeric 32bit value")
		}
		return nil
	}},
	"hot_lru_pct":     {missingArg, atoiRange(1, 79, "hot_lru_pct must be > 1 and < 80")},
	"warm_lru_pct":    {missingArg, atoiRange(1, 79, "warm_lru_pct must be > 1 and < 80")},
	"hot_max_factor":  {missingArg, atofCheck(func(f float64) bool { return f > 0 }, "hot_max_factor must be > 0")},
	"warm_max_factor": {missingArg, atofCheck(func(f float64) bool { return f > 0 }, "warm_max_factor must be > 0")},
	"temporary_ttl":   {missingArg, atoiRange(-1<<62, 1<<62, "")},
	"idle_timeout":    {missingNumeric, atoiRange(-1<<62, 1<<62, "")},
	// memcached 1.6.24 and later refuse these (status 1); values above
	// 1024, which they refuse too, are read as bytes (readSlabChunkMax).
	"slab_chunk_max": {missingArg, func(n, v string) error {
		c, ok := cStrtol(v)
		switch {
		case !ok:
			return mcFail("could not parse argument to %s", n)
		case c <= 0:
			return mcFail("slab_chunk_max must be >= 0")
		}
		return nil
	}},
	"slab_sizes": {"-o slab_sizes needs a value", nil}, // parsed after the loop
	// memcached ignores safe_strtoul's failure here ((void)) and starts
	// unmarked: garbage it takes, refused with a gocached: line.
	"sock_cookie_id": {"-o sock_cookie_id needs a value", func(n, v string) error {
		if _, ok := cStrtoul(v); !ok {
			return refusef("invalid value for %s: %q", n, v)
		}
		return nil
	}},
	"ssl_chain_cert": {missingArg, nil}, "ssl_key": {missingArg, nil},
	"ssl_ciphers": {missingArg, nil}, "ssl_ca_cert": {missingArg, nil},
	"ssl_verify_mode": {missingArg, strtolRange(0, 3, "Invalid ssl_verify_mode. Use help to see valid options.")},
	"ssl_min_version": {missingArg, strtolRange(0, 3, "Invalid ssl_min_version. Use help to see valid options.")},
	"ssl_keyformat":   {missingArg, strtolRange(-1<<31, 1<<31-1, "")},
	"ext_path": {"missing argument to ext_path, ie: ext_path=/d/file:5G", func(_, v string) error {
		if _, err := extstore.ParsePath(v); err != nil {
			return mcFail("%s\n%s", err, extstore.ParseFailedLine)
		}
		return nil
	}},
	"ext_max_frag": {missingArg, strtodCheck}, "slab_automove_freeratio": {missingArg, strtodCheck},
}

func init() {
	// Suboptions memcached reads with safe_strtoul.
	for _, n := range []string{"watcher_logbuf_size", "worker_logbuf_size", "read_buf_mem_limit", "ssl_wbuf_size",
		"ext_page_size", "ext_wbuf_size", "ext_threads", "ext_io_depth", "ext_item_size", "ext_item_age",
		"ext_low_ttl", "ext_recache_rate", "ext_compact_under", "ext_drop_under", "ext_max_sleep"} {
		extChecks[n] = extCheck{missingArg, strtoulCheck}
	}
}

// checkExt checks one suboption as memcached reads it. (memcached 1.6.18
// also refused an ext_page_size after an ext_path; 1.6.45 takes both
// orders.)
func checkExt(name, value string, hasValue bool) error {
	c, ok := extChecks[name]
	if !ok {
		return nil
	}
	if !hasValue && c.missing != "" {
		if strings.HasPrefix(c.missing, "-o ") {
			return refusef("%s", c.missing)
		}
		if strings.Contains(c.missing, "%s") {
			return mcFail(c.missing, name)
		}
		return mcFail("%s", c.missing)
	}
	if hasValue && c.check != nil {
		return c.check(name, value)
	}
	return nil
}

// atoiRange is memcached's atoi of the value and its range check, with
// msg; garbage memcached would read as a number in range is refused (1).
func atoiRange(lo, hi int, msg string) func(name, value string) error {
	return func(name, v string) error {
		if n := cAtoi(v); n < lo || n > hi {
			return mcFail("%s", msg)
		}
		if _, err := strconv.Atoi(v); err != nil {
			return refusef("invalid value for %s: %q", name, v)
		}
		return nil
	}
}

// atofCheck is atoiRange for values memcached reads with atof.
func atofCheck(ok func(float64) bool, msg string) func(name, value string) error {
	return func(name, v string) error {
		if !ok(cAtof(v)) {
			return mcFail("%s", msg)
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return refusef("invalid value for %s: %q", name, v)
		}
		return nil
	}
}

// strtolRange is memcached's safe_strtol and its range check, with msg.
func strtolRange(lo, hi int64, msg string) func(name, value string) error {
	return func(name, v string) error {
		n, ok := cStrtol(v)
		switch {
		case !ok:
			return mcFail("could not parse argument to %s", name)
		case n < lo || n > hi:
			return mcFail("%s", msg)
		}
		return nil
	}
}

func strtoulCheck(name, v string) error {
	if _, ok := cStrtoul(v); !ok {
		return mcFail("could not parse argument to %s", name)
	}
	return nil
}

func strtodCheck(name, v string) error {
	if !cStrtod(v) {
		return mcFail("could not parse argument to %s", name)
	}
	return nil
}

func checkHashAlgorithm(_, v string) error {
	switch v {
	case "jenkins", "murmur3", "xxh3":
		return nil
	}
	return mcFail("Unknown hash_algorithm option (jenkins, murmur3, xxh3)")
}

// memcached's slab page and its default largest chunk.
const (
	slabPageSize        = 1 << 20
	defaultSlabChunkMax = slabPageSize / 2
)

// slabChunkMax is memcached's settings.slab_chunk_size_max after the
// suboptions, in command-line order, and -I.
func slabChunkMax(settings []extSetting, itemSize int) int64 {
	chunk, changed := int64(defaultSlabChunkMax), false
	for _, s := range settings {
		switch s.name {
		case "slab_chunk_max":
			chunk, _ = readSlabChunkMax(s.value, itemSize)
			changed = true
		case "no_chunked_items":
			chunk = slabPageSize
		case "no_modern":
			if !changed {
				chunk = slabPageSize
			}
		}
	}
	if itemSize > slabPageSize && !changed {
		chunk = slabPageSize / 2
	}
	return chunk
}

// checkSlabChunkMax refuses, as memcached does after its loop, a -I its
// slab chunks cannot build: memcached's default largest chunk is 512 KB, so
// -I below 512k, or not a multiple of it, needs -o slab_chunk_max.
func checkSlabChunkMax(settings []extSetting, itemSize int) error {
	chunk, item := slabChunkMax(settings, itemSize), int64(itemSize)
	switch {
	case chunk > item:
		return mcUsage("slab_chunk_max (bytes: %d) cannot be larger than -I (item_size_max %d)", chunk, item)
	case chunk == 0 || item%chunk != 0:
		// memcached divides by zero here (SIGFPE); this is the message
		// its check means.
		return mcUsage("-I (item_size_max: %d) must be evenly divisible by slab_chunk_max (bytes: %d)", item, chunk)
	case slabPageSize%chunk != 0:
		return mcUsage("slab_chunk_max (bytes: %d) must divide evenly into %d (slab_page_size)", chunk, slabPageSize)
	}
	return nil
}

// checkExtAfterLoop makes memcached's other suboption checks after its
// loop, in its order: extstore's, slab_sizes, the LRU percentages, and
// temporary_ttl's need of the LRU maintainer.
func checkExtAfterLoop(settings []extSetting, itemSize, udpPort, minChunk int) error {
	if extHas(settings, "ext_path") {
		wbuf := int64(4 << 20)
		if v, ok := extLast(settings, "ext_wbuf_size"); ok {
			n, _ := cStrtoul(v)
			wbuf = int64(n) << 20
		}
		if int64(itemSize) > wbuf {
			return mcUsage("-I (item_size_max: %d) cannot be larger than ext_wbuf_size: %d", itemSize, wbuf)
		}
		if udpPort != 0 {
			return mcUsage("Cannot use UDP with extstore enabled (-U 0 to disable)")
		}
		if err := checkFlashFiles(extFlash(settings)); err != nil {
			return err
		}
	}
	if sizes := extSlabSizesSpec(settings); sizes != "" {
		if err := checkSlabSizes(sizes, int64(minChunk), slabChunkMax(settings, itemSize)); err != nil {
			return err
		}
	}
	hot, warm, maintainer, temp := 20, 40, true, false
	for _, s := range settings {
		switch s.name {
		case "hot_lru_pct":
			hot = cAtoi(s.value)
		case "warm_lru_pct":
			warm = cAtoi(s.value)
		case "lru_maintainer":
			maintainer = true
		case "no_lru_maintainer", "no_modern":
			maintainer = false
		case "temporary_ttl":
			temp = true
		}
	}
	if hot+warm > 80 {
		return mcUsage("hot_lru_pct + warm_lru_pct cannot be more than 80%% combined")
	}
	if temp && !maintainer {
		return mcUsage("temporary_ttl requires lru_maintainer to be enabled")
	}
	return nil
}

// extSlabSizesSpec is the -o slab_sizes list in force: the last given
// ("" for none). (memcached 1.6.18's worker_logbuf_size fell through to
// slab_sizes in its option switch and counted as one; 1.6.45's does not.)
func extSlabSizesSpec(settings []extSetting) string {
	var sizes string
	for _, s := range settings {
		if s.name == "slab_sizes" {
			sizes = s.value
		}
	}
	return sizes
}

// extSlabSizes is that list read as memcached's _parse_slab_sizes reads it
// (checkSlabSizes has refused what it refuses), for store.Config.SlabSizes.
func extSlabSizes(settings []extSetting) []int {
	var sizes []int
	for _, p := range strings.FieldsFunc(extSlabSizesSpec(settings), func(r rune) bool { return r == '-' }) {
		u, _ := cStrtoul(p)
		sizes = append(sizes, int(uint32(u)))
	}
	return sizes
}

// checkSlabSizes is memcached's _parse_slab_sizes: sizes split by '-',
// each from -n to the largest chunk, growing by more than 8 bytes. The
// sizes are uint32_t there and the bounds ints, so C compares them as
// unsigned: a negative -n (which atoi lets through) puts every size out of
// range.
func checkSlabSizes(s string, minChunk, chunkMax int64) error {
	minChunk, chunkMax = int64(uint32(minChunk)), int64(uint32(chunkMax))
	var last int64
	n := 0
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' }) {
		u, ok := cStrtoul(p)
		size := int64(uint32(u))
		switch {
		case !ok || size < minChunk || size > chunkMax:
			return mcUsage("slab size %d is out of valid range", size)
		case last >= size:
			return mcUsage("slab size %d cannot be lower than or equal to a previous class size", size)
		case size <= last+8:
			return mcUsage("slab size %d must be at least 8 bytes larger than previous class", size)
		}
		last, n = size, n+1
		if n >= 63 {
			return mcUsage("too many slab classes specified")
		}
	}
	return nil
}

// LockTableRefusal is memcached's refusal of a hash table no larger than
// its table of item locks, which its worker threads share and which grows
// with -t (thread.c, when the threads start: after the slab classes, exit
// 1); "" when the start goes on. threads is memcached's -t (4 unless
// given), whatever gocached's own reactor count.
func LockTableRefusal(hashpower, threads int) string {
	if hashpower == 0 {
		return "" // memcached's default, 16, is above every lock table
	}
	var power int
	switch {
	case threads < 3:
		power = 10
	case threads < 4:
		power = 11
	case threads < 5:
		power = 12
	case threads <= 10:
		power = 13
	case threads <= 20:
		power = 14
	default:
		power = 15
	}
	if power < hashpower {
		return ""
	}
	return fmt.Sprintf("Hash table power size (%d) cannot be equal to or less than item lock table (%d)\n", hashpower, power) +
		"Item lock table grows with `-t N` (worker threadcount)\n" +
		"Hash table grows with `-o hashpower=N` \n"
}
