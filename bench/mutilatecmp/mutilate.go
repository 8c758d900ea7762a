package mutilatecmp

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SHA is the mutilate commit the tool is written against (the one the
// integration suite builds): its output format and its -i parser's crash.
const (
	SHA      = "d65c6ef7c2f78ae05a9db3e37d7f6ddff1c0af64"
	shortSHA = "d65c6ef"
)

// Report is what mutilate printed after a run.
type Report struct {
	QPS      float64 `json:"qps"`      // "Total QPS", gets and sets
	Requests int     `json:"requests"` // gets + sets in the measured window
	// ReadAvgUs and ReadP99Us are mutilate's own "read" line (gets only).
	// Its percentiles come from a histogram with 10 %-wide buckets, so
	// the exact figures are taken from the saved samples instead.
	ReadAvgUs float64 `json:"read_avg_us"`
	ReadP99Us float64 `json:"read_p99_us"`
	Misses    int     `json:"misses"`
	Skipped   int     `json:"skipped"`
}

var (
	reportQPS    = regexp.MustCompile(`(?m)^Total QPS = ([0-9.]+) \((\d+) / [0-9.]+s\)$`)
	reportMisses = regexp.MustCompile(`(?m)^Misses = (\d+) `)
	reportSkips  = regexp.MustCompile(`(?m)^Skipped TXs = (\d+) `)
	// #type avg std min 5th 10th 90th 95th 99th
	reportRead = regexp.MustCompile(`(?m)^read\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)\s*$`)
)

// ParseReport reads mutilate's report from its standard output.
func ParseReport(out string) (Report, error) {
	var r Report
	q, rd := reportQPS.FindStringSubmatch(out), reportRead.FindStringSubmatch(out)
	m, s := reportMisses.FindStringSubmatch(out), reportSkips.FindStringSubmatch(out)
	if q == nil || rd == nil || m == nil || s == nil {
		return r, fmt.Errorf("mutilate output without its read, Total QPS, Misses and Skipped lines: %.300q", out)
	}
	var errs [6]error
	r.QPS, errs[0] = strconv.ParseFloat(q[1], 64)
	r.Requests, errs[1] = strconv.Atoi(q[2])
	r.ReadAvgUs, errs[2] = strconv.ParseFloat(rd[1], 64)
	r.ReadP99Us, errs[3] = strconv.ParseFloat(rd[2], 64)
	r.Misses, errs[4] = strconv.Atoi(m[1])
	r.Skipped, errs[5] = strconv.Atoi(s[1])
	for _, err := range errs {
		if err != nil {
			return r, fmt.Errorf("mutilate report: %w", err)
		}
	}
	return r, nil
}

// ParseSamples reads the file mutilate --save writes: one line per get in
// the measured window, "START_SECONDS LATENCY_MICROSECONDS". It returns
// the latencies, sorted.
func ParseSamples(r io.Reader) ([]float64, error) {
	var lat []float64
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("samples line %d: %q, want START LATENCY", line, sc.Text())
		}
		us, err := strconv.ParseFloat(f[1], 64)
		if err != nil || us < 0 || math.IsInf(us, 0) || math.IsNaN(us) {
			return nil, fmt.Errorf("samples line %d: latency %q", line, f[1])
		}
		lat = append(lat, us)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(lat)
	return lat, nil
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// values: the smallest value at or below which p % of them fall.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	// The epsilon keeps a rank that is whole in decimal (99.9 % of 1000)
	// from rounding up in binary.
	rank := int(math.Ceil(p/100*float64(len(sorted)) - 1e-9))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Args is mutilate's command line for one run after the server address:
// qps 0 is the closed loop (mutilate's peak mode), else the open-loop rate.
// samples, when set, is where mutilate saves every get's latency.
func (o *Options) Args(qps int, samples string) []string {
	a := []string{"--noload", "-T", "1",
		"-c", strconv.Itoa(o.Conns), "-d", strconv.Itoa(o.Depth),
		"-r", strconv.Itoa(o.Records), "-K", o.KeySize, "-V", o.ValueSize,
		"-u", strconv.FormatFloat(o.Update, 'f', -1, 64),
		"-t", strconv.Itoa(o.Time), "-w", strconv.Itoa(o.Warmup),
		"-q", strconv.Itoa(qps)}
	if qps > 0 {
		a = append(a, "-i", o.IADist)
	}
	if samples != "" {
		a = append(a, "--save", samples)
	}
	return a
}

// LoadArgs is mutilate's command line that loads the records and exits.
func (o *Options) LoadArgs() []string {
	return []string{"--loadonly", "-r", strconv.Itoa(o.Records), "-K", o.KeySize, "-V", o.ValueSize}
}
