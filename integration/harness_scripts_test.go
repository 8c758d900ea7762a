package integration

import (
	"fmt"
	"strings"
	"time"
)

// diffScript is one request script of the differential test.
type diffScript struct {
	name      string
	flags     []string // for both servers
	steps     []diffStep
	wholeOnly bool // memcached's reply depends on how much it has buffered
}

// diffStep is one write; {cas:KEY} in send is replaced by KEY's latest cas
// unique from the replies so far (so await the gets reply first).
type diffStep struct {
	send  string
	await string        // wait until the replies since this step contain it
	pause time.Duration // then sleep (expiry, flush delay)
}

// script builds a one-step script from request lines.
func script(name string, reqs ...string) diffScript {
	return diffScript{name: name, steps: []diffStep{{send: strings.Join(reqs, "")}}}
}

func (d diffScript) with(flags ...string) diffScript { d.flags = flags; return d }

// set is a set request with a value.
// rejectedLine is a storage line memcached rejects after reading its
// length (format: the line with %d for the length) and rejectedData as its
// data block: gocached and memcached 1.6.45 swallow the block (1.6.18 ran
// it as a command, so the block is one that answers nothing and changes
// nothing).
func rejectedLine(format string) string {
	return fmt.Sprintf(format, len(rejectedData)) + "\r\n" + rejectedData + "\r\n"
}

func set(cmd, key string, flags, exp int, value string) string {
	return fmt.Sprintf("%s %s %d %d %d\r\n%s\r\n", cmd, key, flags, exp, len(value), value)
}

var (
	key250 = strings.Repeat("k", 250)
	key251 = strings.Repeat("k", 251)
	big1MB = strings.Repeat("0123456789", 100000) // 1,000,000 bytes: under -I 1m with item overhead
	tooBig = strings.Repeat("x", 1<<20+4096)      // over -I 1m
)

// Times: memcached's clock ticks once a second and an expiry of N seconds
// takes effect at the N-th tick, so somewhere in (N-1, N] seconds. Scripts
// use N >= 2 where the item must still be there right after the request.
var diffScripts = []diffScript{
	script("set-get",
		set("set", "a", 0, 0, "hello"), "get a\r\n",
		set("set", "a", 42, 0, "world"), "get a\r\n", "get missing\r\n",
		set("set", "e", 0, 0, ""), "get e\r\n",
		set("set", "f", 4294967295, 0, "max-flags"), "get f\r\n"),
	script("multiget",
		set("set", "a", 1, 0, "A"), set("set", "b", 2, 0, "BB"),
		"get a b missing a\r\n", "gets a b\r\n", "get a  b\r\n", "get a \r\n"),
	script("add-replace",
		set("add", "a", 0, 0, "1"), set("add", "a", 0, 0, "2"), "get a\r\n",
		set("replace", "b", 0, 0, "1"), set("replace", "a", 5, 0, "3"), "get a b\r\n"),
	script("append-prepend",
		set("append", "a", 0, 0, "x"), set("prepend", "a", 0, 0, "x"),
		set("set", "a", 7, 0, "mid"), set("append", "a", 9, 0, "-end"),
		set("prepend", "a", 9, 0, "start-"), "gets a\r\n"),
	script("noreply-storage",
		"set a 0 0 1 noreply\r\n1\r\n", "add a 0 0 1 noreply\r\n2\r\n", "add b 0 0 1 noreply\r\n3\r\n",
		"replace a 0 0 1 noreply\r\n4\r\n", "replace z 0 0 1 noreply\r\n5\r\n",
		"append a 0 0 1 noreply\r\n6\r\n", "prepend a 0 0 1 noreply\r\n7\r\n", "get a b z\r\n"),
	script("noreply-other",
		set("set", "n", 0, 0, "10"), set("set", "d", 0, 0, "x"),
		"incr n 5 noreply\r\n", "decr n 2 noreply\r\n", "incr missing 1 noreply\r\n",
		"delete d noreply\r\n", "delete d noreply\r\n", "touch n 100 noreply\r\n",
		"verbosity 1 noreply\r\n", "get n d\r\n", "version\r\n"),
	// flush_all in the second an item was stored: memcached 1.6.45 flushes
	// items stored before the previous second by their time, and those of
	// this second by a walk of its LRU queues that an item moving between
	// them can escape (one of two memcached processes kept n once, trickled,
	// on a loaded machine). A second's pause makes the flush go by time.
	{name: "noreply-flush", steps: []diffStep{
		{send: set("set", "n", 0, 0, "10"), await: "STORED\r\n", pause: 1100 * time.Millisecond},
		{send: "flush_all noreply\r\nget n\r\nversion\r\n"},
	}},
	script("noreply-errors",
		"set a 0 0 1 noreply\r\nxyz\r\n", "get a\r\n", "incr a 1 noreply\r\n",
		set("set", "s", 0, 0, "abc"), "incr s 1 noreply\r\n", "get s\r\n"),
	{name: "cas", steps: []diffStep{
		{send: set("set", "c", 3, 0, "one") + "gets c\r\n", await: "END\r\n"},
		{send: "cas c 0 0 3 {cas:c}\r\ntwo\r\ncas c 0 0 5 {cas:c}\r\nthree\r\ngets c\r\n", await: "END\r\n"},
		{send: "cas c 0 0 4 {cas:c} noreply\r\nfour\r\nget c\r\ncas missing 0 0 1 1\r\nx\r\ncas c 0 0 1\r\nx\r\n" + rejectedLine("cas c 0 0 %d abc")},
	}},
	{name: "cas-disabled", flags: []string{"-C"}, steps: []diffStep{
		{send: set("set", "c", 0, 0, "one") + "gets c\r\n", await: "END\r\n"},
		{send: "cas c 0 0 3 {cas:c}\r\ntwo\r\ncas c 0 0 3 1\r\nsix\r\ngets c\r\nstats settings\r\n"},
	}},
	script("delete",
		set("set", "a", 0, 0, "1"), "delete a\r\n", "delete a\r\n", set("set", "a", 0, 0, "1"),
		"delete a 0\r\n", "delete a 5\r\n", "delete a 0 noreply\r\n", "delete\r\n", "get a\r\n"),
	script("incr-decr",
		"incr n 1\r\n", "decr n 1\r\n", set("set", "n", 0, 0, "10"),
		"incr n 5\r\n", "decr n 3\r\n", "decr n 100\r\n", "incr n 18446744073709551615\r\n",
		"incr n 1\r\n", "incr n 0\r\n", "get n\r\n",
		set("set", "g", 0, 0, "99"), "incr g 1\r\n", "get g\r\n",
		set("set", "w", 0, 0, "18446744073709551615"), "incr w 2\r\n", "get w\r\n",
		set("set", "big", 0, 0, "18446744073709551616"), "incr big 1\r\n",
		set("set", "s", 0, 0, "abc"), "incr s 1\r\n", "decr s 1\r\n",
		set("set", "neg", 0, 0, "-5"), "incr neg 1\r\n",
		"incr n abc\r\n", "incr n -1\r\n", "incr n 18446744073709551616\r\n", "incr n\r\n",
		set("set", "lead", 0, 0, "007"), "incr lead 1\r\n", "get lead\r\n"),
	// A counter a reply not yet written holds (a hit earlier in the same
	// read) is not rewritten in place: memcached links a new item,
	// unpadded. Whole only: where the reads end decides it.
	{name: "decr-held", wholeOnly: true, steps: []diffStep{{send: set("set", "n", 0, 0, "1000") +
		"get n\r\ndecr n 1\r\nget n\r\n" + set("set", "m", 0, 0, "100") + "mg m\r\nma m MD\r\nmg m v\r\n" +
		set("set", "b", 0, 0, "100") + "get b\r\nmn\r\ndecr b 1\r\nget b\r\n"}}},
	script("decr-shrink",
		set("set", "n", 0, 0, "1000"), "decr n 999\r\n", "get n\r\n", "incr n 1\r\n", "get n\r\n"),
	script("touch-gat",
		"touch a 10\r\n", set("set", "a", 5, 0, "v"), "touch a 100\r\n", "touch a abc\r\n",
		"gat 100 a\r\n", "gats 100 a missing\r\n", "gat 100 missing\r\n", "gat abc a\r\n",
		"gat 100\r\n", "touch a\r\n", "touch a -1\r\n", "get a\r\n"),
	{name: "expiry", steps: []diffStep{
		{send: set("set", "short", 0, 2, "1") + set("set", "past", 0, -1, "1") +
			set("set", "abs-past", 0, 1000000000, "1") + set("set", "abs-future", 0, int(time.Now().Unix()+3600), "1") +
			set("set", "long", 0, 2592000, "1") + "get short past abs-past abs-future long\r\n",
			await: "END\r\n", pause: 3100 * time.Millisecond},
		{send: "get short long\r\ntouch short 10\r\n"},
	}},
	{name: "flush-delay", steps: []diffStep{
		{send: set("set", "a", 0, 0, "1") + "flush_all 3\r\nget a\r\n", await: "END\r\n", pause: 4100 * time.Millisecond},
		{send: "get a\r\n" + set("set", "b", 0, 0, "2") + "get b\r\nflush_all 0\r\nget b\r\nflush_all abc\r\nflush_all -1\r\nflush_all 1 noreply\r\nflush_all noreply extra\r\n"},
	}},
	script("flush-all",
		set("set", "a", 0, 0, "1"), set("set", "b", 0, 0, "1"), "flush_all\r\n", "get a b\r\n",
		set("add", "a", 0, 0, "2"), "get a\r\n"),
	// Items given their CAS by the client (E) after a flush: a small CAS
	// once read as flushed, compared with the flush's CAS cut-off.
	script("flush-then-client-cas",
		"flush_all\r\n", "ms k 1 E1\r\nx\r\n", "mg k v c\r\n", "ma n N0 J5 E2\r\n", "mg n v c\r\n",
		"get k n\r\n"),
	script("version-verbosity",
		"version\r\n", "verbosity 1\r\n", "verbosity 0\r\n", "verbosity\r\n", "verbosity 1 2 3\r\n"),
	script("unknown-and-empty",
		"bogus\r\n", "\r\n", "GET a\r\n", "sets a 0 0 1\r\n", "get\r\n", "gets\r\n", "version\r\n"),
	script("bad-command-lines",
		"set a 0 0\r\n", rejectedLine("set a x 0 %d"), rejectedLine("set a 0 x %d"), "set a 0 0 x\r\n",
		"set a 0 0 -1\r\n", "set a 4294967296 0 1\r\n1\r\n", "set a 0 0 1 2 3 4\r\n", "get a\r\n", "version\r\n"),
	script("bad-data-chunk",
		"set a 0 0 3\r\nabcd\r\n", "get a\r\n", "set b 0 0 3\r\nab\r\n\r\n", "get b\r\n",
		"set c 0 0 1\r\nxyz\r\nget c\r\n", "version\r\n"),
	// A get refusing a bad key first: memcached 1.6.45 then drops the
	// replies still queued from earlier requests of its read batch, which
	// depends on how the steps arrive.
	script("keys",
		"get "+key251+"\r\n",
		set("set", key250, 0, 0, "long"), "get "+key250+"\r\n",
		"delete "+key251+"\r\n", "incr "+key251+" 1\r\n", "touch "+key251+" 1\r\n", "version\r\n"),
	// Whether memcached swallows the data block after a rejected key depends
	// on whether it has arrived yet, so this one is sent whole only.
	{name: "set-long-key", wholeOnly: true, steps: []diffStep{{send: set("set", key251, 0, 0, rejectedData) + "get " + key250 + "\r\nversion\r\n"}}},
	script("multiget-long-key", "get a "+key251+"\r\n", "version\r\n"),
	script("lf-line-endings",
		"set a 0 0 1\n1\r\n", "get a\n", "version\n", "delete a\n", "get a\r\n"),
	script("big-value",
		set("set", "big", 0, 0, big1MB), "get big\r\n", set("append", "big", 0, 0, "tail"), "gets big\r\n"),
	script("too-large",
		set("set", "huge", 0, 0, tooBig), "get huge\r\n", set("set", "ok", 0, 0, "fine"),
		set("set", "ok", 0, 0, tooBig), "get ok\r\n"),
	script("too-large-noreply",
		fmt.Sprintf("set huge 0 0 %d noreply\r\n%s\r\n", len(tooBig), tooBig), "get huge\r\nversion\r\n"),
	script("too-large-512k",
		set("set", "v", 0, 0, strings.Repeat("v", 600<<10)), set("set", "w", 0, 0, strings.Repeat("w", 400<<10)), "get v\r\n",
		"stats settings\r\n").with("-I", "512k"),
	// Nonzero flags take 4 bytes of an item's room (memcached's suffix),
	// for a set and for what an append may add to it.
	script("too-large-flags",
		set("set", "k", 1, 0, strings.Repeat("v", 1048512)), set("set", "k", 1, 0, strings.Repeat("v", 1048513)),
		set("set", "k", 1, 0, strings.Repeat("v", 1048511)), set("append", "k", 0, 0, "x"), set("append", "k", 0, 0, "x"),
		"get k\r\n"),
	// An item over slab_chunk_max (512 KB) is chunked in memcached, and
	// incr/decr refuse it as non-numeric, whatever number it starts with.
	script("incr-chunked",
		set("set", "a", 0, 0, "12"+strings.Repeat(" ", 600000)), "incr a 1\r\n", "decr a 1\r\n", "ma a\r\n",
		set("set", "b", 0, 0, "12"+strings.Repeat(" ", 524226)), "incr b 1\r\n", "ma b v\r\n"),
	script("pipelined-200", pipelined(200)),
	script("stats-counters",
		set("set", "a", 0, 0, "1"), "get a\r\n", "get a b\r\n", "gets a\r\n", "delete a\r\n", "delete a\r\n",
		set("set", "n", 0, 0, "1"), "incr n 1\r\n", "decr n 1\r\n", "incr x 1\r\n", "decr x 1\r\n",
		"touch n 10\r\n", "touch x 10\r\n", "cas n 0 0 1 1\r\n1\r\n", "cas x 0 0 1 1\r\n1\r\n", "stats\r\n"),
	// What the meta commands and rejected requests count: md x is a
	// delete hit (not a set), an append that vivifies counts one set, a
	// set whose data block is bad still counted its set, flush_all counts
	// before it reads its arguments.
	script("stats-counters-more",
		set("set", "k", 0, 0, "abc"), "md k x\r\n", "md k x q\r\nmn\r\n", "md missing x\r\n",
		"ms m 1 MA N30\r\nz\r\n", "ms p 1 MP N30\r\nz\r\n", "ms m 1 MA N30\r\nz\r\n",
		"set b 0 0 1\r\nxy\r\n", "ms b 1\r\nxy\r\n",
		"flush_all abc\r\n", "flush_all 12abc\r\n", "stats\r\n"),
	script("stats-settings", "stats settings\r\n").with("-m", "32", "-c", "500", "-R", "7"),
	// memcached 1.6.45 reads admin numbers strictly: no wrap at 2^32, no '+'.
	script("admin-numbers",
		"cache_memlimit 4294967396\r\n", "cache_memlimit +100\r\n", "lru_crawler tocrawl 4294967301\r\n",
		"lru_crawler sleep +5\r\n", "stats cachedump 4294967297 1\r\n", "slabs reassign 4294967297 2\r\n",
		"lru tune 4294967306 20 0.1 2.0\r\n", "lru temp_ttl 4294967396\r\n", "cache_memlimit 100\r\n",
		"stats settings\r\n"),
	// slab_chunk_max is memcached's default 512 KB even with a larger -I,
	// -o slab_chunk_max's value (kilobytes since memcached 1.6.24), or the whole
	// 1 MB page without chunks.
	script("stats-settings-2m", "stats settings\r\n").with("-I", "2m"),
	script("stats-settings-chunk-max", "stats settings\r\n").with("-I", "512k", "-o", "slab_chunk_max=256"),
	script("stats-settings-no-chunks", "stats settings\r\n").with("-o", "no_chunked_items"),
	script("stats-reset",
		set("set", "a", 0, 0, "1"), "get a\r\n", "stats reset\r\n", "get a\r\n", "stats\r\n"),
	script("stats-misc",
		set("set", "a", 0, 0, "1"), "stats items\r\n", "stats slabs\r\n", "stats conns\r\n", "version\r\n"),
	script("quit",
		set("set", "a", 0, 0, "1"), "get a\r\n", "quit\r\n", "get a\r\n"),
	script("mixed-pipeline",
		set("set", "a", 1, 0, "A"), "get a\r\n", "bogus cmd\r\n", "set b 0 0 1 noreply\r\nB\r\n",
		"incr a 1\r\n", "gets a b\r\n", "delete a noreply\r\n", "set c 0 0 2\r\nxyz\r\n",
		"get a b c\r\n", "touch b 0\r\n", "version\r\n", "verbosity 0 noreply\r\n", "get b\r\n"),
	script("big-values-pipelined", bigPipeline(8, 300<<10)),
	script("noreply-bad-lines",
		"set a 0 0 x noreply\r\n", "set a 0 0 -1 noreply\r\n", "incr a x noreply\r\n",
		"touch a x noreply\r\n", "get a\r\n", "version\r\n"),
	script("incr-after-padding",
		set("set", "n", 0, 0, "100"), "decr n 95\r\n", "incr n 10\r\n", "decr n 15\r\n", "incr n 1000\r\n", "get n\r\n",
		set("append", "n", 0, 0, "7"), "get n\r\n"),
	{name: "line-too-long", wholeOnly: true, steps: []diffStep{
		{send: "version\r\n", await: "VERSION"},
		{send: strings.Repeat("a", 3000)},
	}},
	{name: "long-multiget", wholeOnly: true, steps: []diffStep{
		{send: set("set", "key-7", 0, 0, "x") + "get " + manyKeys(400) + "\r\n", await: "END\r\n"},
	}},
}

// pipelined is n sets then n gets in one buffer.
func pipelined(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(set("set", fmt.Sprintf("p%d", i), i, 0, strings.Repeat("v", i)))
	}
	for i := range n {
		fmt.Fprintf(&b, "get p%d\r\n", i)
	}
	b.WriteString("get p0 p1 p2 p199\r\n")
	return b.String()
}

// bigPipeline stores n values of size bytes and reads them all back, twice.
func bigPipeline(n, size int) string {
	var b strings.Builder
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("big%d", i)
		b.WriteString(set("set", keys[i], i, 0, strings.Repeat(string(rune('a'+i)), size)))
	}
	for _, k := range keys {
		b.WriteString("get " + k + "\r\n")
	}
	b.WriteString("get " + strings.Join(keys, " ") + "\r\n")
	return b.String()
}

func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	return strings.Join(keys, " ")
}
