package integration

// cliAnswer is how a server answers a command line: its exit status (-1:
// still running at the bound, it took the line) and its stderr, with the
// program's name as "PROG: ".
type cliAnswer struct {
	status int
	stderr string
}

// ownAnswer is a command line gocached answers otherwise than memcached
// 1.6.45 on purpose: both answers, each checked.
type ownAnswer struct {
	memcached, gocached cliAnswer
}

// slabChunkMaxBytes is gocached's own answer to an -o slab_chunk_max above
// 1024: bytes, as memcached 1.6.23 and earlier read them, with a warning,
// where memcached 1.6.24 and later refuse the value. A memcached.conf
// written for 1.6.18 keeps meaning what it meant.
func slabChunkMaxBytes(value, fix, refusal string) cliAnswer {
	return cliAnswer{64, "WARNING: -o slab_chunk_max=" + value + " is read as " + value +
		" bytes, as memcached 1.6.23 and earlier read it; memcached 1.6.24 and later take kilobytes and refuse a value above 1024: " +
		fix + ".\n" + refusal + "\n"}
}

// slabChunkMaxKilobytes is memcached 1.6.45's refusal of a slab_chunk_max
// above 1024 (kilobytes since 1.6.24).
var slabChunkMaxKilobytes = cliAnswer{1, "slab_chunk_max must be specified in kilobytes.\n"}

// cliOwnAnswers are TestCommandLineErrorsMatchMemcached's lines gocached
// answers otherwise than memcached 1.6.45 (docs/compatibility.md lists
// them).
var cliOwnAnswers = map[string]ownAnswer{
	"-o slab_chunk_max=2097152": {slabChunkMaxKilobytes, slabChunkMaxBytes("2097152", "they cannot set this chunk size",
		"slab_chunk_max (bytes: 2097152) cannot be larger than -I (item_size_max 1048576)")},
	"-o slab_chunk_max=300000 -I 600000": {slabChunkMaxKilobytes, slabChunkMaxBytes("300000", "they cannot set this chunk size",
		"slab_chunk_max (bytes: 300000) must divide evenly into 1048576 (slab_page_size)")},
}

// cliTakenSince1618 are lines memcached 1.6.18 refused at once and 1.6.45
// takes (it serves with them), each with the release that changed it:
// gocached must take them too.
var cliTakenSince1618 = map[string]string{
	// worker_logbuf_size no longer falls through to slab_sizes.
	"-o worker_logbuf_size=16": "1.6.40",
	// ext_page_size may follow ext_path.
	"-o ext_path=/tmp/x:64m,ext_page_size=64": "1.6.40",
}
