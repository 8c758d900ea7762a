package integration

import "strings"

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

// What memcached 1.6.45, the reference, answers otherwise than the 1.6.18
// on PATH, for the differential tests: each entry names the release that
// changed it.

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

// argsChange is a command line for the 1.6.18 on PATH that makes it answer
// as memcached 1.6.45 answers another.
type argsChange struct {
	release string // the memcached release that changed the answer
	args    []string
}

// memcachedArgs145: gocached runs the key's command line, the memcached on
// PATH the value's, each pair checked against memcached 1.6.45.
var memcachedArgs145 = map[string]argsChange{
	// worker_logbuf_size no longer falls through to slab_sizes: the
	// default classes.
	"-o worker_logbuf_size=64": {"1.6.40", nil},
	// slab_chunk_max is read in kilobytes.
	"-I 512k -o slab_chunk_max=256": {"1.6.24", []string{"-I", "512k", "-o", "slab_chunk_max=262144"}},
}

// referenceArgs is the command line the memcached on PATH needs to answer
// as memcached 1.6.45 answers args.
func referenceArgs(args []string) []string {
	if ch, ok := memcachedArgs145[strings.Join(args, " ")]; ok {
		return ch.args
	}
	return args
}

// settingChange is a `stats settings` default that changed after 1.6.18.
type settingChange struct {
	release  string
	old, new string
}

// settingDefaults145 are the defaults memcached 1.6.45 reports otherwise
// than 1.6.18.
var settingDefaults145 = map[string]settingChange{
	"slab_automove_window": {"1.6.34", "30", "10"},
}

// wantSetting is what gocached must report for the setting name, given the
// memcached on PATH reported ref for a command line whose -o list is o:
// memcached 1.6.45's default where o leaves the setting at its default.
func wantSetting(name, ref, o string) string {
	ch, ok := settingDefaults145[name]
	if !ok || ref != ch.old || strings.Contains(","+o, ","+name+"=") {
		return ref
	}
	return ch.new
}
