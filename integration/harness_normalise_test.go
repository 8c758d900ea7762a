package integration

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Normalisation of reply streams for the differential test. Everything not
// listed here must match memcached byte for byte:
//
//   - "VALUE key flags bytes cas": a nonzero cas unique becomes "<cas>"
//     (uniques are server-assigned; -C must still give 0 on both).
//   - A value that is a decimal number followed by spaces loses the spaces
//     and its byte count is adjusted: protocol.txt lets a shrinking incr/decr
//     keep its length space-padded, which memcached does in place.
//   - "VERSION x" becomes "VERSION <version>".
//   - A general "stats" block (it has STAT pid): lines are sorted (field
//     order is not part of the protocol); values of fields in
//     comparedStats are kept, all others become "<v>" (pid, uptime, time,
//     rusage, memory layout, byte counts, thread counts legitimately differ).
//     Fields gocached prints that memcached does not are dropped; fields
//     memcached prints that gocached lacks stay and show as a difference.
//   - A "stats settings" block (it has STAT maxconns) keeps only the fields
//     in comparedSettings, sorted.
//   - Any other STAT block (stats items, slabs, conns, sizes: their layout
//     is memcached's slab allocator) becomes one line "STAT <omitted>".
var (
	comparedStats = setOf(
		"cmd_get", "cmd_set", "cmd_flush", "cmd_touch",
		"get_hits", "get_misses", "get_expired", "get_flushed",
		"delete_hits", "delete_misses", "incr_hits", "incr_misses",
		"decr_hits", "decr_misses", "cas_hits", "cas_misses", "cas_badval",
		"touch_hits", "touch_misses", "curr_items", "total_items",
		"limit_maxbytes", "accepting_conns", "listen_disabled_num",
		"evictions", "auth_cmds", "auth_errors", "rejected_connections",
	)
	comparedSettings = setOf(
		"maxbytes", "maxconns", "udpport", "evictions",
		"cas_enabled", "item_size_max", "reqs_per_event", "slab_chunk_max",
	)
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var (
	valueLine  = regexp.MustCompile(`^VALUE (\S+) (\d+) (\d+)(?: (\d+))?\r\n$`)
	paddedNum  = regexp.MustCompile(`^(\d+) +$`)
	versionRep = regexp.MustCompile(`^VERSION .*\r\n$`)
)

// normalise rewrites a reply stream as described above. keep, when not nil,
// is the set of general-stats field names the reference printed.
func normalise(stream []byte, keep map[string]bool) []byte {
	var out bytes.Buffer
	var stats []string
	flushStats := func() {
		if stats != nil {
			out.WriteString(normaliseStats(stats, keep))
			stats = nil
		}
	}
	for len(stream) > 0 {
		i := bytes.IndexByte(stream, '\n')
		if i < 0 {
			flushStats()
			out.Write(stream) // a trailing partial line: keep as is
			break
		}
		line := string(stream[:i+1])
		stream = stream[i+1:]
		if strings.HasPrefix(line, "STAT ") {
			stats = append(stats, line)
			continue
		}
		flushStats()
		switch m := valueLine.FindStringSubmatch(line); {
		case m != nil:
			n, _ := strconv.Atoi(m[3])
			if len(stream) < n+2 {
				out.WriteString(line)
				continue
			}
			data := stream[:n]
			stream = stream[n:]
			if p := paddedNum.FindSubmatch(data); p != nil {
				data = p[1]
			}
			cas := m[4]
			if cas != "" && cas != "0" {
				cas = "<cas>"
			}
			out.WriteString("VALUE " + m[1] + " " + m[2] + " " + strconv.Itoa(len(data)))
			if cas != "" {
				out.WriteString(" " + cas)
			}
			out.WriteString("\r\n")
			out.Write(data)
		case versionRep.MatchString(line):
			out.WriteString("VERSION <version>\r\n")
		default:
			out.WriteString(line)
		}
	}
	flushStats()
	return out.Bytes()
}

func statName(line string) string {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 2 {
		return ""
	}
	return strings.TrimRight(f[1], "\r\n")
}

func normaliseStats(lines []string, keep map[string]bool) string {
	names := map[string]bool{}
	for _, l := range lines {
		names[statName(l)] = true
	}
	var kept []string
	switch {
	case names["pid"]:
		for _, l := range lines {
			name := statName(l)
			if keep != nil && !keep[name] {
				continue
			}
			if !comparedStats[name] {
				l = "STAT " + name + " <v>\r\n"
			}
			kept = append(kept, l)
		}
	case names["maxconns"]:
		for _, l := range lines {
			if comparedSettings[statName(l)] {
				kept = append(kept, l)
			}
		}
	default:
		return "STAT <omitted>\r\n"
	}
	sort.Strings(kept)
	return strings.Join(kept, "")
}

// statNames is the set of fields in the general stats blocks of a
// normalised reference stream.
func statNames(normalised []byte) map[string]bool {
	names := map[string]bool{}
	for _, l := range strings.SplitAfter(string(normalised), "\n") {
		if strings.HasPrefix(l, "STAT ") {
			names[statName(l)] = true
		}
	}
	return names
}
