package main

import (
	"bytes"
	"github.com/gocached/gocached/internal/config"
	"strings"
	"testing"
)

// TestBadCommandLines: a bad command line exits with memcached 1.6.45's
// status and prints its message (asked of the real binary; see
// integration/cli_errors_test.go, which compares the two), or, where
// memcached takes the value, gocached's refusal with status 1; gocached's
// own flags exit 64.
func TestBadCommandLines(t *testing.T) {
	const illegal = "\nIllegal argument \"?\""
	tests := []struct {
		args   string // split on spaces; '' is an empty argument
		status int
		stderr string // without the last newline
	}{
		// getopt's errors.
		{"--bogus", 1, "gocached: unrecognized option '--bogus'" + illegal},
		{"--bogus=1", 1, "gocached: unrecognized option '--bogus=1'" + illegal},
		// memcached's -h prints --napi_ids, but its getopt_long knows only
		// the dashed names.
		{"--napi_ids=2", 1, "gocached: unrecognized option '--napi_ids=2'" + illegal},
		{"--conn_limit 5", 1, "gocached: unrecognized option '--conn_limit'" + illegal},
		{"-j", 1, "gocached: invalid option -- 'j'" + illegal},
		{"-vj", 1, "gocached: invalid option -- 'j'" + illegal},
		{"-e", 1, "gocached: option requires an argument -- 'e'" + illegal},
		{"-o", 1, "gocached: option requires an argument -- 'o'" + illegal},
		{"--memory-file", 1, "gocached: option '--memory-file' requires an argument" + illegal},
		// Checks in memcached's getopt loop: 1.
		{"-c 0", 1, "Maximum connections must be greater than 0"},
		{"-c abc", 1, "Maximum connections must be greater than 0"},
		{"-c -1", 1, "Maximum connections must be greater than 0"},
		{"-t 0", 1, "Number of threads must be greater than 0"},
		{"-t abc", 1, "Number of threads must be greater than 0"},
		{"-f 1", 1, "Factor must be greater than 1"},
		{"-f abc", 1, "Factor must be greater than 1"},
		{"-n 0", 1, "Chunk size must be greater than 0"},
		{"-n abc", 1, "Chunk size must be greater than 0"},
		{"-R 0", 1, "Number of requests per event must be greater than 0"},
		{"-R abc", 1, "Number of requests per event must be greater than 0"},
		{"-N 0", 1, "Maximum number of NAPI IDs must be greater than 0"},
		{"-N abc", 1, "Maximum number of NAPI IDs must be greater than 0"},
		{"-D ''", 1, "No delimiter specified"},
		{"-o bogus", 1, `Illegal suboption "bogus"`},
		{"-o ext_bogus=1", 1, `Illegal suboption "ext_bogus=1"`},
		{"-o track_sizes,,modern", 1, `Illegal suboption ""`},
		{"-o hashpower", 1, "Missing numeric argument for hashpower"},
		{"-o hashpower=abc", 1, "Initial hashtable multiplier of 0 is too low"},
		{"-o hashpower=40", 1, "Initial hashtable multiplier of 40 is too high\nChoose a value based on \"STAT hash_power_level\" from a running instance"},
		{"-o hash_algorithm=foo", 1, "Unknown hash_algorithm option (jenkins, murmur3, xxh3)"},
		{"-o hash_algorithm", 1, "Missing hash_algorithm argument"},
		{"-o tail_repair_time=1", 1, "Cannot set tail_repair_time to less than 10 seconds"},
		{"-o tail_repair_time", 1, "Missing numeric argument for tail_repair_time"},
		{"-o ext_path=/x", 1, "must supply size to ext_path, ie: ext_path=/f/e:64m (M|G|T|P supported)\nfailed to parse ext_path argument"},
		{"-o ext_path", 1, "missing argument to ext_path, ie: ext_path=/d/file:5G"},
		{"-o ext_path=/x:64q", 1, "must supply size to ext_path, ie: ext_path=/f/e:64m (m|g|t|p supported)\nfailed to parse ext_path argument"},
		{"-o ext_path=/x:64m:bogus", 1, "Unknown extstore bucket: bogus\nfailed to parse ext_path argument"},
		{"-o ext_page_size=abc", 1, "could not parse argument to ext_page_size"},
		{"-o idle_timeout", 1, "Missing numeric argument for idle_timeout"},
		{"-o lru_crawler_sleep=-1", 1, "LRU crawler sleep must be between 0 and 1 second"},
		{"-o lru_crawler_tocrawl=abc", 1, "lru_crawler_tocrawl takes a numeric 32bit value"},
		{"-o slab_automove=3", 1, "slab_automove must be between 0 and 2"},
		{"-o slab_automove_ratio", 1, "Missing slab_automove_ratio argument"},
		{"-o slab_automove_window=1", 1, "slab_automove_window must be > 2 and < 1800"},
		{"-o slab_automove_window=1801", 1, "slab_automove_window must be > 2 and < 1800"},
		{"-o hot_lru_pct=90", 1, "hot_lru_pct must be > 1 and < 80"},
		{"-o hot_max_factor=0", 1, "hot_max_factor must be > 0"},
		{"-o temporary_ttl", 1, "Missing temporary_ttl argument"},
		{"-o watcher_logbuf_size=-1", 1, "could not parse argument to watcher_logbuf_size"},
		{"-o ssl_verify_mode=7", 1, "Invalid ssl_verify_mode. Use help to see valid options."},
		{"-o ssl_min_version=abc", 1, "could not parse argument to ssl_min_version"},
		{"-o ssl_chain_cert", 1, "Missing ssl_chain_cert argument"},
		{"-o slab_chunk_max=abc", 1, "could not parse argument to slab_chunk_max"},
		{"-o slab_chunk_max", 1, "Missing slab_chunk_max argument"},
		{"-o slab_chunk_max=0", 1, "slab_chunk_max must be >= 0"},
		{"-o slab_chunk_max=-4", 1, "slab_chunk_max must be >= 0"},
		{"-R -1", 1, "Number of requests per event must be greater than 0"},
		{"-n -1", 1, "Chunk size must be greater than 0"},
		{"-n -1 -o slab_sizes=200-100", 1, "Chunk size must be greater than 0"},
		// Checks after memcached's loop, and -B: EX_USAGE.
		{"-m abc", 64, "Cannot set item size limit higher than 1/2 of memory max."},
		{"-m 0", 64, "Cannot set item size limit higher than 1/2 of memory max."},
		{"-m 1", 64, "Cannot set item size limit higher than 1/2 of memory max."},
		{"-I 512", 64, "Item max size cannot be less than 1024 bytes."},
		{"-I abc", 64, "Item max size cannot be less than 1024 bytes."},
		{"-I 2g", 64, "Item max size cannot be less than 1024 bytes."},
		{"-I 2m -m 3", 64, "Cannot set item size limit higher than 1/2 of memory max."},
		{"-I 1025m -m 4096", 64, "Cannot set item size limit higher than a gigabyte."},
		{"-I 100000", 64, "slab_chunk_max (bytes: 524288) cannot be larger than -I (item_size_max 100000)"},
		{"-I 1000k", 64, "-I (item_size_max: 1024000) must be evenly divisible by slab_chunk_max (bytes: 524288)"},
		// Kilobytes, as memcached 1.6.24 and later read them.
		{"-o slab_chunk_max=100", 64, "-I (item_size_max: 1048576) must be evenly divisible by slab_chunk_max (bytes: 102400)"},
		{"-I 2k -o slab_chunk_max=4", 64, "slab_chunk_max (bytes: 4096) cannot be larger than -I (item_size_max 2048)"},
		// Bytes, as before 1.6.24, with a warning (memcached 1.6.45
		// refuses the value: "slab_chunk_max must be specified in
		// kilobytes.").
		{"-o slab_chunk_max=300000 -I 600000", 64, "WARNING: -o slab_chunk_max=300000 is read as 300000 bytes, as memcached 1.6.23 and earlier read it; " +
			"memcached 1.6.24 and later take kilobytes and refuse a value above 1024: they cannot set this chunk size.\n" +
			"slab_chunk_max (bytes: 300000) must divide evenly into 1048576 (slab_page_size)"},
		{"-o slab_sizes=40-100", 64, "slab size 40 is out of valid range"},
		{"-o slab_sizes=100-104", 64, "slab size 104 must be at least 8 bytes larger than previous class"},
		{"-o hot_lru_pct=50,warm_lru_pct=50", 64, "hot_lru_pct + warm_lru_pct cannot be more than 80% combined"},
		{"-o temporary_ttl=5,no_lru_maintainer", 64, "temporary_ttl requires lru_maintainer to be enabled"},
		{"-o ext_path=/tmp/x:1m", 64, "supplied ext_path has zero size, cannot use"},
		{"-o ext_path=/tmp/x:64m,ext_page_size=128", 64, "supplied ext_path has zero size, cannot use"},
		{"-o ext_path=/tmp/x:64m -U 5", 64, "Cannot use UDP with extstore enabled (-U 0 to disable)"},
		{"-B bogus", 64, "Invalid value for binding protocol: bogus\n -- should be one of auto, binary, or ascii"},
		{"-N 9", 64, "Number of napi_ids(9) cannot be greater than number of threads(4)"},
		{"-S -B ascii", 64, "ERROR: You cannot allow the ASCII protocol while using SASL."},
		{"-S -U 5", 64, "ERROR: Cannot enable UDP while using binary SASL authentication."},
		{"-Y /x -B auto", 64, "ERROR: You cannot allow the BINARY protocol while using ascii authentication tokens."},
		{"-Y /x -U 5 -p 6", 64, "Cannot use UDP with ascii authentication enabled (-U 0 to disable)"},
		{"-p 70000", 64, "ERROR: Invalid port number 70000."},
		{"-U 70000", 64, "ERROR: Invalid port number 70000."},
		{"-Z -p 0", 64, "ERROR: You cannot enable SSL without a TCP port."},
		// Several bad flags: the first on the command line is refused, each
		// occurrence checked with its own value, as memcached's getopt loop
		// reads them; getopt's own refusals too, where they stand.
		{"-c 0 -c 5", 1, "Maximum connections must be greater than 0"},
		{"-f abc --ver", 1, "Factor must be greater than 1"},
		{"--ver -c 0", 1, "gocached: option '--ver' is ambiguous; possibilities: '--version' '--verbose'" + illegal},
		{"-N 0 --bogus=1", 1, "Maximum number of NAPI IDs must be greater than 0"},
		{"--napi-ids 0 --slab-min-size=abc", 1, "Maximum number of NAPI IDs must be greater than 0"},
		{"-o hashpower=11 -n abc", 1, "Initial hashtable multiplier of 11 is too low"},
		{"-o bogus -c 0", 1, `Illegal suboption "bogus"`},
		{"-c 0 -o bogus", 1, "Maximum connections must be greater than 0"},
		{"-B auto-negotiate --bogus=1", 64, "Invalid value for binding protocol: auto-negotiate\n -- should be one of auto, binary, or ascii"},
		{"-R abc -t 0 --threads", 1, "Number of requests per event must be greater than 0"},
		{"-o slab_automove_ratio=2 --memory-limit", 1, "slab_automove_ratio must be > 0 and < 1"},
		{"-o ssl_verify_mode=7 --lock-memory=5", 1, "Invalid ssl_verify_mode. Use help to see valid options."},
		{"-t abc -I 512 --lis", 1, "Number of threads must be greater than 0"},
		{"-c abc -vj", 1, "Maximum connections must be greater than 0"},
		{"-c 0 -V", 1, "Maximum connections must be greater than 0"},
		// memcached's warning while it reads -t stays before a later refusal.
		{"-t 100 -f 1", 1, "WARNING: Setting a high number of workerthreads is not recommended.\n" +
			" Set this value to the number of cores in your machine or less.\nFactor must be greater than 1"},
		// gocached's refusals of garbage memcached takes wait for memcached's
		// checks, in and after its loop, which read the value as it does.
		{"-c 12abc -f 1", 1, "Factor must be greater than 1"},
		{"-c 12abc -o bogus", 1, `Illegal suboption "bogus"`},
		{"stray -c 0", 1, "Maximum connections must be greater than 0"},
		{"-o ext_path=/tmp/x:64m -U 5 -c 12abc", 64, "Cannot use UDP with extstore enabled (-U 0 to disable)"},
		{"-b 0 -p 70000", 64, "ERROR: Invalid port number 70000."},
		{"-I 2048x", 64, "slab_chunk_max (bytes: 524288) cannot be larger than -I (item_size_max 2048)"},
		{"-m -5 -I 512", 64, "Item max size cannot be less than 1024 bytes."},
		{"-t 2x -N 9", 64, "Number of napi_ids(9) cannot be greater than number of threads(2)"},
		// Garbage memcached takes (atoi, strtol) and starts with: refused, 1.
		{"-c 12abc", 1, `gocached: invalid value "12abc" for -c: want a number`},
		{"-t 2x", 1, `gocached: invalid value "2x" for -t: want a number of threads, or auto`},
		{"-f 2x", 1, `gocached: invalid value "2x" for -f: want a number`},
		{"-m -5", 1, `gocached: invalid memory limit -m "-5": want a positive number of megabytes`},
		{"-I 1048576x", 1, `gocached: invalid max item size -I "1048576x": want bytes, or a number with suffix k or m`},
		{"-p abc", 1, `gocached: invalid argument "abc" for "-p, --port" flag: must be an integer`},
		{"-p -2", 1, "gocached: invalid port number -2"},
		{"-U 70000 -p 5", 1, "gocached: invalid UDP port number 70000"},
		{"-a 9", 1, `gocached: invalid -a "9": want an octal access mask such as 700`},
		{"-o sock_cookie_id=abc", 1, `gocached: invalid value for sock_cookie_id: "abc"`},
		{"-b 0", 1, "gocached: listen backlog must be greater than 0 (-b 0)"},
		{"stray", 1, `gocached: unexpected argument "stray"`},
		{"-o idle_timeout=abc", 1, `gocached: invalid value for idle_timeout: "abc"`},
		{"-o lru_crawler_sleep=abc", 1, `gocached: invalid value for lru_crawler_sleep: "abc"`},
		{"-o ssl_keyformat=2", 1, "gocached: ssl_keyformat: gocached reads PEM keys only (1)"},
		// gocached's own flags and limits: 64, gocached's wording.
		{"--engine rocket", 64, `gocached: unknown --engine "rocket" (want epoll, uring or go)`},
		{"--max-events 0", 64, "gocached: --max-events must be greater than 0 (got 0)"},
		{"--poll-auto-interval 0", 64, "gocached: --poll-auto-interval must be greater than 0 (got 0s)"},
		{"--poll-auto-interval -1s", 64, "gocached: --poll-auto-interval must be greater than 0 (got -1s)"},
		{"--busy-poll-budget 70000", 64, `gocached: invalid argument "70000" for "--busy-poll-budget" flag: must be a non-negative integer`},
		{"--pin-cpus 0-2,1", 64, `gocached: invalid --pin-cpus "0-2,1": cpu list "0-2,1": CPU 1 listed twice`},
		{"--poll-mode turbo", 64, `gocached: --poll-mode: unknown poll mode "turbo" (want one of base, deferX, napibusy, fullbusy, suspend0, suspendX, threadedbusy, auto, X in µs)`},
		{"--interface=", 64, "gocached: --interface needs an interface name"},
		{"-Z", 64, "gocached: -Z needs a certificate: -o ssl_chain_cert=FILE[,ssl_key=FILE]"},
		{"-Z --engine=epoll -o ssl_chain_cert=/x", 64, "gocached: -Z: TLS is served by --engine=go, not --engine=epoll"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			args := strings.Split(tt.args, " ")
			for i, a := range args {
				if a == "''" {
					args[i] = ""
				}
			}
			// A command line that parses would start a server: fail instead.
			if _, err := config.Parse(args); err == nil {
				t.Fatalf("config.Parse(%q) accepted it", args)
			}
			var stdout, stderr bytes.Buffer
			status := run(args, &stdout, &stderr)
			if status != tt.status || stderr.String() != tt.stderr+"\n" || stdout.Len() != 0 {
				t.Errorf("run(%q) = %d, stderr %q, stdout %q; want %d, %q, nothing",
					args, status, stderr.String(), stdout.String(), tt.status, tt.stderr+"\n")
			}
		})
	}
}
