package integration

// cliAnswer is how a server answers a command line: its exit status (-1:
// still running at the bound, it took the line) and its stderr, with the
// program's name as "PROG: ".
type cliAnswer struct {
	status int
	stderr string
}

// cliChange is a command line memcached 1.6.45, the reference, answers
// differently from 1.6.18 (Debian 12's, what the suite runs), and what
// gocached must answer instead of the memcached on PATH.
type cliChange struct {
	release string // the memcached release that changed the answer; "1.6.45" where not pinned down
	want    cliAnswer
}

// slabChunkMaxBytes is gocached's own answer to an -o slab_chunk_max above
// 1024: bytes, as memcached 1.6.23 and earlier read them, with a warning,
// where memcached 1.6.24 and later refuse the value
// ("slab_chunk_max must be specified in kilobytes.", status 1).
func slabChunkMaxBytes(value, fix, refusal string) cliAnswer {
	return cliAnswer{64, "WARNING: -o slab_chunk_max=" + value + " is read as " + value +
		" bytes, as memcached 1.6.23 and earlier read it; memcached 1.6.24 and later take kilobytes and refuse a value above 1024: " +
		fix + ".\n" + refusal + "\n"}
}

// cliChanges are TestCommandLineErrorsMatchMemcached's lines whose answer
// changed after 1.6.18, each checked against memcached 1.6.45 (gocached's
// deliberate difference aside: slabChunkMaxBytes).
var cliChanges = map[string]cliChange{
	"-o slab_automove_window=1": {"1.6.34", cliAnswer{1, "slab_automove_window must be > 2 and < 1800\n"}},
	// -n and -R refuse negatives; 1.6.18 started with them.
	"-n -1 -o slab_sizes=200-100": {"1.6.45", cliAnswer{1, "Chunk size must be greater than 0\n"}},
	// slab_chunk_max is read in kilobytes.
	"-o slab_chunk_max=100": {"1.6.24", cliAnswer{64, "-I (item_size_max: 1048576) must be evenly divisible by slab_chunk_max (bytes: 102400)\n"}},
	"-o slab_chunk_max=2097152": {"1.6.24", slabChunkMaxBytes("2097152", "they cannot set this chunk size",
		"slab_chunk_max (bytes: 2097152) cannot be larger than -I (item_size_max 1048576)")},
	"-o slab_chunk_max=300000 -I 600000": {"1.6.24", slabChunkMaxBytes("300000", "they cannot set this chunk size",
		"slab_chunk_max (bytes: 300000) must divide evenly into 1048576 (slab_page_size)")},
	// worker_logbuf_size no longer falls through to slab_sizes: taken.
	"-o worker_logbuf_size=16": {"1.6.40", cliAnswer{-1, ""}},
	// ext_page_size may follow ext_path: taken.
	"-o ext_path=/tmp/x:64m,ext_page_size=64": {"1.6.40", cliAnswer{-1, ""}},
}
