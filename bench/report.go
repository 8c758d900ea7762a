package bench

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteText prints r the way mutilate does: a latency table in
// microseconds (read = gets, update = sets), then the rate and the counts.
func (r *Result) WriteText(w io.Writer) error {
	if r.Seconds == 0 && r.Load != nil {
		_, err := fmt.Fprintf(w, "Loaded %d records in %.1fs (%d refused)\n", r.Load.Records, r.Load.Seconds, r.Load.Errors)
		return err
	}
	pw := NewPrinter(w)
	pw.Printf("%-7s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n",
		"#type", "avg", "std", "min", "5th", "10th", "50th", "90th", "95th", "99th")
	row := func(name string, l Latency) {
		pw.Printf("%-7s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n",
			name, l.Avg, l.Std, l.Min, l.P5, l.P10, l.P50, l.P90, l.P95, l.P99)
	}
	row("read", r.GetLatency)
	row("update", r.SetLatency)
	if r.TargetQPS > 0 {
		row("lag", r.SendLag)
	}
	pw.Printf("\nTotal QPS = %.1f (%d / %.1fs)\n", r.QPS, r.Requests, r.Seconds)
	if r.TargetQPS > 0 {
		pw.Printf("Offered QPS = %.1f (target %.1f)\n", r.OfferedQPS, r.TargetQPS)
	}
	pw.Printf("\nMisses = %d (%.1f%%)\n", r.Misses, percent(r.Misses, r.Gets))
	pw.Printf("Errors = %d (%d error replies, %d unanswered)\n", r.Errors, r.ErrReplies, r.Unanswered)
	pw.Printf("Unsent = %d (pipeline full)\n", r.Unsent)
	if r.FirstError != "" {
		pw.Printf("First error reply: %s\n", r.FirstError)
	}
	for _, e := range r.ConnErrors {
		pw.Printf("Connection error: %s\n", e)
	}
	return pw.Err()
}

// WriteJSON prints r as one JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
