package metrics

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector turns the server's stats groups into metrics on every scrape.
// It is an unchecked collector (Describe sends nothing): the reactor lines
// may grow fields, which are exported as they come.
type Collector struct {
	src Source
	// netstat is the kernel's TCP extended counters file (a variable for
	// tests); missing, as off Linux, it adds no metric.
	netstat string
}

// NewCollector returns the collector over src.
func NewCollector(src Source) *Collector {
	return &Collector{src: src, netstat: "/proc/net/netstat"}
}

// Describe sends nothing: the collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

const ns = "memcached"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// stat maps one `stats` line to a metric without labels.
type stat struct {
	key  string
	name string
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func counter(key, name, help string) stat {
	return stat{key, ns + "_" + name, desc(ns+"_"+name, help), prometheus.CounterValue}
}

func gauge(key, name, help string) stat {
	return stat{key, ns + "_" + name, desc(ns+"_"+name, help), prometheus.GaugeValue}
}

// generalStats are memcached_exporter's metrics of a bare `stats`, by the
// stat each reads. rusage values are "seconds.micros", which parse as
// decimal seconds.
var generalStats = []stat{
	counter("uptime", "uptime_seconds", "Number of seconds since the server started."),
	gauge("time", "time_seconds", "Current UNIX time according to the server."),
	counter("rusage_user", "process_user_cpu_seconds_total", "Accumulated user time for this process."),
	counter("rusage_system", "process_system_cpu_seconds_total", "Accumulated system time for this process."),
	gauge("bytes", "current_bytes", "Current number of bytes used to store items."),
	gauge("limit_maxbytes", "limit_bytes", "Number of bytes this server is allowed to use for storage."),
	gauge("curr_items", "current_items", "Current number of items stored by this instance."),
	counter("total_items", "items_total", "Total number of items stored during the life of this instance."),
	counter("bytes_read", "read_bytes_total", "Total number of bytes read by this server from network."),
	counter("bytes_written", "written_bytes_total", "Total number of bytes sent by this server to network."),
	gauge("curr_connections", "current_connections", "Current number of open connections."),
	counter("total_connections", "connections_total", "Total number of connections opened since the server started running."),
	counter("rejected_connections", "connections_rejected_total", "Total number of connections rejected for hitting the -c limit."),
	counter("conn_yields", "connections_yielded_total", "Total number of connections yielded running due to hitting the -R limit."),
	counter("listen_disabled_num", "connections_listener_disabled_total", "Number of times the server hit its connection limit and disabled its listener."),
	counter("evictions", "items_evicted_total", "Total number of valid items removed from cache to free memory for new items."),
	counter("reclaimed", "items_reclaimed_total", "Total number of times an entry was stored using memory from an expired entry."),
	counter("store_too_large", "item_too_large_total", "The number of times an item exceeded the max-item-size when being stored."),
	counter("store_no_memory", "item_no_memory_total", "The number of times an item could not be stored due to no more memory."),
	counter("lru_crawler_starts", "lru_crawler_starts_total", "Times an LRU crawler was started."),
	counter("direct_reclaims", "direct_reclaims_total", "Times worker threads had to directly reclaim or evict items."),
	counter("crawler_items_checked", "lru_crawler_items_checked_total", "Total items examined by LRU Crawler."),
	counter("crawler_reclaimed", "lru_crawler_reclaimed_total", "Total items freed by LRU Crawler."),
	counter("moves_to_cold", "lru_crawler_moves_to_cold_total", "Total number of items moved from HOT/WARM to COLD LRU's."),
	counter("moves_to_warm", "lru_crawler_moves_to_warm_total", "Total number of items moved from COLD to WARM LRU."),
	counter("moves_within_lru", "lru_crawler_moves_within_lru_total", "Total number of items reshuffled within HOT or WARM LRU's."),
	gauge("accepting_conns", "accepting_connections", "The server is currently accepting new connections."),
	// memcached reports these two for its proxy; gocached for its NAPI routing.
	counter("round_robin_fallback", "round_robin_fallback_total", "Total connections placed round-robin for want of a reactor owning their NAPI."),
	counter("unexpected_napi_ids", "unexpected_napi_ids_total", "Total connections whose NAPI ID matched no reactor."),
}

var (
	upDesc       = desc(ns+"_up", "Could the server's stats be read.")
	versionDesc  = desc(ns+"_version", "The version of this server.", "version")
	commandsDesc = desc(ns+"_commands_total", "Total number of all requests broken down by command (get, set, etc.) and status.", "command", "status")
	maxConnsDesc = desc(ns+"_max_connections", "Maximum number of clients allowed.")
	mallocDesc   = desc(ns+"_malloced_bytes", "Number of bytes of memory allocated to slab pages.")
)

// settingsStats are exported when `stats settings` says lru_crawler yes,
// as memcached_exporter does; yes/no values read as 1/0.
var settingsStats = []stat{
	gauge("lru_crawler", "lru_crawler_enabled", "Whether the LRU crawler is enabled."),
	gauge("lru_crawler_sleep", "lru_crawler_sleep", "Microseconds to sleep between LRU crawls."),
	gauge("lru_crawler_tocrawl", "lru_crawler_to_crawl", "Max items to crawl per slab per run."),
	gauge("lru_maintainer_thread", "lru_crawler_maintainer_thread", "Split LRU mode and background threads."),
	gauge("hot_lru_pct", "lru_crawler_hot_percent", "Percent of slab memory reserved for HOT LRU."),
	gauge("warm_lru_pct", "lru_crawler_warm_percent", "Percent of slab memory reserved for WARM LRU."),
	gauge("hot_max_factor", "lru_crawler_hot_max_factor", "Set idle age of HOT LRU to COLD age * this."),
	gauge("warm_max_factor", "lru_crawler_warm_max_factor", "Set idle age of WARM LRU to COLD age * this."),
}

// commandOps are the commands whose hits and misses `stats` counts.
var commandOps = []string{"get", "delete", "incr", "decr", "cas", "touch"}

// Collect reads every group and sends its metrics. memcached_up is 0 when a
// group the server has could not be read.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	up := 1.0
	read := func(group string) map[string]string {
		m, err := c.src.Stats(group)
		if err != nil {
			if !errors.Is(err, ErrUnknownGroup) {
				up = 0
			}
			return nil
		}
		return m
	}
	if s := read(""); s != nil {
		collectGeneral(ch, s)
	}
	if s := read("settings"); s != nil {
		collectSettings(ch, s)
	}
	collectSlabs(ch, read("items"), read("slabs"))
	if s := read("reactors"); s != nil {
		collectReactors(ch, s)
	}
	c.collectKernel(ch)
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up)
}

// value parses a stat: a number, or yes/no as 1/0.
func value(s map[string]string, key string) (float64, bool) {
	v, ok := s[key]
	if !ok {
		return 0, false
	}
	switch v {
	case "yes", "on":
		return 1, true
	case "no", "off":
		return 0, true
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// emit sends the metric of key when s has it as a number.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, typ prometheus.ValueType, s map[string]string, key string, labels ...string) {
	if v, ok := value(s, key); ok {
		ch <- prometheus.MustNewConstMetric(d, typ, v, labels...)
	}
}

func collectGeneral(ch chan<- prometheus.Metric, s map[string]string) {
	if v, ok := s["version"]; ok {
		ch <- prometheus.MustNewConstMetric(versionDesc, prometheus.GaugeValue, 1, v)
	}
	for _, st := range generalStats {
		emit(ch, st.desc, st.typ, s, st.key)
	}
	for _, op := range commandOps {
		emit(ch, commandsDesc, prometheus.CounterValue, s, op+"_hits", op, "hit")
		emit(ch, commandsDesc, prometheus.CounterValue, s, op+"_misses", op, "miss")
	}
	emit(ch, commandsDesc, prometheus.CounterValue, s, "cas_badval", "cas", "badval")
	emit(ch, commandsDesc, prometheus.CounterValue, s, "cmd_flush", "flush", "hit")
	// cmd_set counts cas commands too; the exporter's set/hit leaves them out.
	if set, ok := sum(s, "cmd_set"); ok {
		if cas, ok := sum(s, "cas_misses", "cas_hits", "cas_badval"); ok {
			ch <- prometheus.MustNewConstMetric(commandsDesc, prometheus.CounterValue, set-cas, "set", "hit")
		}
	}
}

// sum adds the stats of keys; false if one is missing or not a number.
func sum(s map[string]string, keys ...string) (float64, bool) {
	total := 0.0
	for _, k := range keys {
		v, ok := value(s, k)
		if !ok {
			return 0, false
		}
		total += v
	}
	return total, true
}

func collectSettings(ch chan<- prometheus.Metric, s map[string]string) {
	emit(ch, maxConnsDesc, prometheus.GaugeValue, s, "maxconns")
	if s["lru_crawler"] != "yes" {
		return
	}
	for _, st := range settingsStats {
		emit(ch, st.desc, st.typ, s, st.key)
	}
}

// slabStat maps a per-class field of `stats items` or `stats slabs` to a
// metric labelled by slab (the class number).
type slabStat struct {
	field string
	desc  *prometheus.Desc
	typ   prometheus.ValueType
}

func slabMetric(field, name, help string, typ prometheus.ValueType) slabStat {
	return slabStat{field, desc(ns+"_slab_"+name, help, "slab"), typ}
}

var itemsStats = []slabStat{
	slabMetric("number", "current_items", "Number of items currently stored in this slab class.", prometheus.GaugeValue),
	slabMetric("age", "items_age_seconds", "Number of seconds the oldest item has been in the slab class.", prometheus.GaugeValue),
	slabMetric("crawler_reclaimed", "items_crawler_reclaimed_total", "Number of items freed by the LRU Crawler.", prometheus.CounterValue),
	slabMetric("evicted", "items_evicted_total", "Total number of times an item had to be evicted from the LRU before it expired.", prometheus.CounterValue),
	slabMetric("evicted_nonzero", "items_evicted_nonzero_total", "Total number of evictions of items that had an explicit expire time.", prometheus.CounterValue),
	slabMetric("evicted_time", "items_evicted_time_seconds", "Seconds since the last access for the most recent item evicted from this class.", prometheus.GaugeValue),
	slabMetric("evicted_unfetched", "items_evicted_unfetched_total", "Total number of items evicted and never fetched.", prometheus.CounterValue),
	slabMetric("expired_unfetched", "items_expired_unfetched_total", "Total number of items expired and never fetched.", prometheus.CounterValue),
	slabMetric("outofmemory", "items_outofmemory_total", "Total number of items of this class that triggered an out of memory error.", prometheus.CounterValue),
	slabMetric("reclaimed", "items_reclaimed_total", "Total number of items reclaimed.", prometheus.CounterValue),
	slabMetric("tailrepairs", "items_tailrepairs_total", "Total number of times the entries for a particular ID need repairing.", prometheus.CounterValue),
	slabMetric("moves_to_cold", "items_moves_to_cold", "Number of items moved from HOT or WARM into COLD.", prometheus.CounterValue),
	slabMetric("moves_to_warm", "items_moves_to_warm", "Number of items moved from COLD into WARM.", prometheus.CounterValue),
	slabMetric("moves_within_lru", "items_moves_within_lru", "Number of times active items were bumped within HOT or WARM.", prometheus.CounterValue),
	slabMetric("number_hot", "hot_items", "Number of items presently stored in the HOT LRU.", prometheus.GaugeValue),
	slabMetric("number_warm", "warm_items", "Number of items presently stored in the WARM LRU.", prometheus.GaugeValue),
	slabMetric("number_cold", "cold_items", "Number of items presently stored in the COLD LRU.", prometheus.GaugeValue),
	slabMetric("number_temp", "temporary_items", "Number of items presently stored in the TEMPORARY LRU.", prometheus.GaugeValue),
	slabMetric("age_hot", "hot_age_seconds", "Age of the oldest item in HOT LRU.", prometheus.GaugeValue),
	slabMetric("age_warm", "warm_age_seconds", "Age of the oldest item in WARM LRU.", prometheus.GaugeValue),
}

var slabsStats = []slabStat{
	slabMetric("chunk_size", "chunk_size_bytes", "Number of bytes allocated to each chunk within this slab class.", prometheus.GaugeValue),
	slabMetric("chunks_per_page", "chunks_per_page", "Number of chunks within a single page for this slab class.", prometheus.GaugeValue),
	slabMetric("total_pages", "current_pages", "Number of pages allocated to this slab class.", prometheus.GaugeValue),
	slabMetric("total_chunks", "current_chunks", "Number of chunks allocated to this slab class.", prometheus.GaugeValue),
	slabMetric("used_chunks", "chunks_used", "Number of chunks allocated to an item.", prometheus.GaugeValue),
	slabMetric("free_chunks", "chunks_free", "Number of chunks not yet allocated items.", prometheus.GaugeValue),
	slabMetric("free_chunks_end", "chunks_free_end", "Number of free chunks at the end of the last allocated page.", prometheus.GaugeValue),
}

var (
	slabMemDesc      = desc(ns+"_slab_mem_requested_bytes", "Number of bytes of memory actual items take up within a slab.", "slab")
	slabLRUHitsDesc  = desc(ns+"_slab_lru_hits_total", "Number of get_hits to the LRU.", "slab", "lru")
	slabCommandsDesc = desc(ns+"_slab_commands_total", "Total number of all requests broken down by command (get, set, etc.) and status per slab.", "slab", "command", "status")
	lruNames         = [][2]string{{"hits_to_hot", "hot"}, {"hits_to_warm", "warm"}, {"hits_to_cold", "cold"}, {"hits_to_temp", "temporary"}}
)

// byClass splits "PREFIXN:field value" lines into per-class maps; other
// lines (totals) are skipped.
func byClass(s map[string]string, prefix string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for k, v := range s {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		class, field, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if _, err := strconv.Atoi(class); err != nil {
			continue
		}
		if out[class] == nil {
			out[class] = map[string]string{}
		}
		out[class][field] = v
	}
	return out
}

// sortedKeys returns m's keys in numeric order, so output is stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.Atoi(keys[i])
		b, _ := strconv.Atoi(keys[j])
		return a < b || a == b && keys[i] < keys[j]
	})
	return keys
}

func collectSlabs(ch chan<- prometheus.Metric, items, slabs map[string]string) {
	itemClasses, slabClasses := byClass(items, "items:"), byClass(slabs, "")
	for _, class := range sortedKeys(itemClasses) {
		u := itemClasses[class]
		for _, st := range itemsStats {
			emit(ch, st.desc, st.typ, u, st.field, class)
		}
		for _, l := range lruNames {
			emit(ch, slabLRUHitsDesc, prometheus.CounterValue, u, l[0], class, l[1])
		}
		if _, inSlabs := slabClasses[class]["mem_requested"]; !inSlabs {
			emit(ch, slabMemDesc, prometheus.GaugeValue, u, "mem_requested", class)
		}
	}
	for _, class := range sortedKeys(slabClasses) {
		v := slabClasses[class]
		for _, st := range slabsStats {
			emit(ch, st.desc, st.typ, v, st.field, class)
		}
		emit(ch, slabMemDesc, prometheus.GaugeValue, v, "mem_requested", class)
		for _, op := range commandOps {
			emit(ch, slabCommandsDesc, prometheus.CounterValue, v, op+"_hits", class, op, "hit")
		}
		emit(ch, slabCommandsDesc, prometheus.CounterValue, v, "cas_badval", class, "cas", "badval")
		if set, ok := sum(v, "cmd_set"); ok {
			if cas, ok := sum(v, "cas_hits", "cas_badval"); ok {
				ch <- prometheus.MustNewConstMetric(slabCommandsDesc, prometheus.CounterValue, set-cas, class, "set", "hit")
			}
		}
	}
	emit(ch, mallocDesc, prometheus.GaugeValue, slabs, "total_malloced")
}
