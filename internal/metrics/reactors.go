package metrics

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// gocached's own metrics, from `stats reactors` ("reactor:N:field value"
// lines, one block per epoll reactor) and the kernel.

const gns = "gocached"

// reactorStat maps a reactor field to a metric labelled by reactor.
type reactorStat struct {
	name string
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func reactorMetric(name, help string, typ prometheus.ValueType) reactorStat {
	return reactorStat{gns + "_reactor_" + name, desc(gns+"_reactor_"+name, help, "reactor"), typ}
}

// reactorStats are the known numeric fields of a reactor block; napi_id,
// cpu and poll_mode go to gocached_reactor_info, the NAPI knobs to
// gocached_napi_*. Fields added later are exported as
// gocached_reactor_<field> (untyped) until they are named here.
var reactorStats = map[string]reactorStat{
	"conns":            reactorMetric("connections", "Client connections the reactor serves.", prometheus.GaugeValue),
	"accepted":         reactorMetric("accepted_connections_total", "Connections the reactor accepted.", prometheus.CounterValue),
	"handoff_in":       reactorMetric("handoffs_in_total", "Connections handed to this reactor by another, for their NAPI ID.", prometheus.CounterValue),
	"handoff_out":      reactorMetric("handoffs_out_total", "Connections this reactor handed to the reactor owning their NAPI ID.", prometheus.CounterValue),
	"misrouted":        reactorMetric("misrouted_connections", "Connections whose current NAPI ID differs from the reactor's.", prometheus.GaugeValue),
	"ref_sends":        reactorMetric("values_sent_by_reference_total", "Large values written from the store's memory without a copy.", prometheus.CounterValue),
	"epoll_waits":      reactorMetric("epoll_waits_total", "epoll_wait calls.", prometheus.CounterValue),
	"events":           reactorMetric("events_total", "Events epoll_wait returned.", prometheus.CounterValue),
	"max_batch":        reactorMetric("max_batch_events", "Most events one epoll_wait returned.", prometheus.GaugeValue),
	"busy_poll_usecs":  reactorMetric("busy_poll_usecs", "The epoll context's busy-poll time in microseconds (EPIOCSPARAMS).", prometheus.GaugeValue),
	"busy_poll_budget": reactorMetric("busy_poll_budget_packets", "Packets per busy-poll round.", prometheus.GaugeValue),
	"prefer_busy_poll": reactorMetric("prefer_busy_poll", "1 if the epoll context prefers busy polling over IRQs.", prometheus.GaugeValue),
	"max_events":       reactorMetric("max_events", "The epoll_wait batch bound.", prometheus.GaugeValue),
}

var (
	reactorInfoDesc = desc(gns+"_reactor_info", "A reactor: the NAPI it owns, its CPU (-1: not pinned) and the poll mode.",
		"reactor", "napi_id", "cpu", "poll_mode")
	napiDescs = map[string]*prometheus.Desc{
		"defer_hard_irqs":     desc(gns+"_napi_defer_hard_irqs", "The NAPI's defer-hard-irqs knob, read from the kernel.", "napi_id"),
		"gro_flush_timeout":   desc(gns+"_napi_gro_flush_timeout_nanoseconds", "The NAPI's gro-flush-timeout knob, read from the kernel.", "napi_id"),
		"irq_suspend_timeout": desc(gns+"_napi_irq_suspend_timeout_nanoseconds", "The NAPI's irq-suspend-timeout knob, read from the kernel.", "napi_id"),
	}
	napiReactorsDesc = desc(gns+"_napi_reactors", "Reactors serving the NAPI (0: loopback or not learnt yet).", "napi_id")
	napiConnsDesc    = desc(gns+"_napi_connections", "Client connections served for the NAPI.", "napi_id")
	busyPollRxDesc   = desc(gns+"_busy_poll_rx_packets_total",
		"Packets received by busy polling in the server's network namespace (TcpExt BusyPollRxPackets).")
)

// reactorInfoFields are the fields gocached_reactor_info carries.
var reactorInfoFields = map[string]bool{"napi_id": true, "cpu": true, "poll_mode": true}

func collectReactors(ch chan<- prometheus.Metric, s map[string]string) {
	blocks := byClass(s, "reactor:")
	type napi struct {
		reactors, conns float64
		knobs           map[string]string
	}
	napis := map[string]*napi{}
	for _, id := range sortedKeys(blocks) {
		r := blocks[id]
		napiID, cpu, mode := r["napi_id"], r["cpu"], r["poll_mode"]
		ch <- prometheus.MustNewConstMetric(reactorInfoDesc, prometheus.GaugeValue, 1, id, napiID, cpu, mode)
		for _, field := range sortedKeys(r) {
			if reactorInfoFields[field] || napiDescs[field] != nil {
				continue
			}
			if st, ok := reactorStats[field]; ok {
				emit(ch, st.desc, st.typ, r, field, id)
				continue
			}
			if name := metricName(field); name != "" {
				emit(ch, desc(gns+"_reactor_"+name, "Field "+field+" of stats reactors.", "reactor"),
					prometheus.UntypedValue, r, field, id)
			}
		}
		if napiID == "" {
			continue
		}
		n := napis[napiID]
		if n == nil {
			n = &napi{knobs: map[string]string{}}
			napis[napiID] = n
		}
		n.reactors++
		if v, ok := value(r, "conns"); ok {
			n.conns += v
		}
		for field := range napiDescs {
			if v, ok := r[field]; ok {
				n.knobs[field] = v // the kernel's value: the same for every reactor of the NAPI
			}
		}
	}
	for _, id := range sortedKeys(napis) {
		n := napis[id]
		ch <- prometheus.MustNewConstMetric(napiReactorsDesc, prometheus.GaugeValue, n.reactors, id)
		ch <- prometheus.MustNewConstMetric(napiConnsDesc, prometheus.GaugeValue, n.conns, id)
		for field, d := range napiDescs {
			emit(ch, d, prometheus.GaugeValue, n.knobs, field, id)
		}
	}
}

// metricName makes a reactor field a metric name part: letters, digits and
// underscores, or "" when it cannot be one.
func metricName(field string) string {
	if field == "" || field[0] >= '0' && field[0] <= '9' {
		return ""
	}
	for _, r := range field {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return field
}

// collectKernel reads TcpExt BusyPollRxPackets from the netstat file: a
// header line of names and a line of values per section.
func (c *Collector) collectKernel(ch chan<- prometheus.Metric) {
	b, err := os.ReadFile(c.netstat)
	if err != nil {
		return
	}
	if v, ok := netstatValue(b, "TcpExt", "BusyPollRxPackets"); ok {
		ch <- prometheus.MustNewConstMetric(busyPollRxDesc, prometheus.CounterValue, v)
	}
}

// netstatValue finds section:name in /proc/net/netstat's format.
func netstatValue(b []byte, section, name string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var header []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != section+":" {
			continue
		}
		if header == nil {
			header = f
			continue
		}
		for i := 1; i < len(f) && i < len(header); i++ {
			if header[i] == name {
				v, err := strconv.ParseFloat(f[i], 64)
				return v, err == nil
			}
		}
		return 0, false
	}
	return 0, false
}
