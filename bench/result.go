package bench

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises a latency histogram in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	Std   float64 `json:"std"`
	Min   float64 `json:"min"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

func summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	q := func(p float64) float64 { return us(h.ValueAtQuantile(p)) }
	return Latency{
		Count: h.TotalCount(),
		Avg:   h.Mean() / 1e3,
		Std:   h.StdDev() / 1e3,
		Min:   us(h.Min()),
		P5:    q(5), P10: q(10), P50: q(50), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9),
		Max: us(h.Max()),
	}
}

// Result is what one run measured. Counts cover requests whose scheduled
// send time fell inside the measured interval (after the warmup).
type Result struct {
	Server      string  `json:"server"`
	TargetQPS   float64 `json:"target_qps"`  // 0: closed loop
	OfferedQPS  float64 `json:"offered_qps"` // requests the schedule put in the interval, per second
	QPS         float64 `json:"qps"`         // requests answered, per second of the interval
	Seconds     float64 `json:"seconds"`     // the measured interval
	Connections int     `json:"connections"` // total
	Threads     int     `json:"threads"`
	Depth       int     `json:"depth"`

	Requests   int64 `json:"requests"` // answered
	Gets       int64 `json:"gets"`
	Sets       int64 `json:"sets"`
	Hits       int64 `json:"hits"`
	Misses     int64 `json:"misses"`
	Errors     int64 `json:"errors"`      // error replies + unanswered + failed connections' losses
	ErrReplies int64 `json:"err_replies"` // replies that were errors
	Unanswered int64 `json:"unanswered"`  // sent, never answered before the drain timeout
	Unsent     int64 `json:"unsent"`      // scheduled, never sent: the pipeline stayed full

	Latency    Latency  `json:"latency_us"`
	GetLatency Latency  `json:"get_latency_us"`
	SetLatency Latency  `json:"set_latency_us"`
	SendLag    Latency  `json:"send_lag_us"` // open loop: actual minus scheduled send time
	ConnErrors []string `json:"conn_errors,omitempty"`
	FirstError string   `json:"first_error_reply,omitempty"`

	Load *LoadResult `json:"load,omitempty"`
}

// outcome is what one connection reports at the end of a run.
type outcome struct {
	stats                     *connStats
	sent, received, scheduled int64
	err                       error
}

// collect merges the connections' outcomes into r. lags are the open
// loop's send-lag histograms (none in the closed loop); unsent counts the
// window's requests that never went out.
func (r *Result) collect(outs []outcome, lags []*hdrhistogram.Histogram, unsent int64, interval time.Duration) {
	get, set, all, lag := newLatencyHistogram(), newLatencyHistogram(), newLatencyHistogram(), newLatencyHistogram()
	scheduled := unsent
	for _, o := range outs {
		s := o.stats
		get.Merge(s.get)
		set.Merge(s.set)
		r.Gets += s.gets
		r.Sets += s.sets
		r.Hits += s.hits
		r.Misses += s.misses
		r.ErrReplies += s.errorReplies
		if r.FirstError == "" {
			r.FirstError = s.firstErrReply
		}
		r.Unanswered += o.sent - o.received
		scheduled += o.scheduled
		if o.err != nil {
			r.ConnErrors = append(r.ConnErrors, o.err.Error())
		}
	}
	for _, h := range lags {
		lag.Merge(h)
	}
	r.Unsent = unsent
	all.Merge(get)
	all.Merge(set)
	r.Requests = r.Gets + r.Sets
	r.Errors = r.ErrReplies + r.Unanswered
	r.Seconds = interval.Seconds()
	r.QPS = float64(r.Requests) / r.Seconds
	r.OfferedQPS = float64(scheduled) / r.Seconds
	r.Latency, r.GetLatency, r.SetLatency = summarize(all), summarize(get), summarize(set)
	if len(lags) > 0 {
		r.SendLag = summarize(lag)
	}
}
