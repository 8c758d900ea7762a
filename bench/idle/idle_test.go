package idle

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

func TestMain(m *testing.M) { testproc.VerifyMain(m, testproc.Cleanup) }

func TestParseSchedstat(t *testing.T) {
	for in, want := range map[string]threadStat{
		"123 456 7\n":     {RunNs: 123, Slices: 7},
		"0 0 0":           {},
		"9 1 2 extra 5\n": {RunNs: 9, Slices: 2},
	} {
		if got, err := parseSchedstat([]byte(in)); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1 2", "a b c", "1 2 -3"} {
		if _, err := parseSchedstat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDiff(t *testing.T) {
	before := snapshot{1: {100, 10}, 2: {50, 5}, 3: {7, 7}}
	after := snapshot{
		1: {300, 14}, // ran 4 times
		2: {50, 5},   // slept through
		4: {20, 3},   // born in the window
		3: {1, 1},    // id reused by a thread born in the window
	}
	d := diff(before, after)
	want := delta{Slices: 4 + 3 + 1, RunNs: 200 + 20 + 1, Threads: 4, Woken: 3, TopSlices: 4}
	if d != want {
		t.Errorf("diff = %+v, want %+v", d, want)
	}
	r := resultOf(Case{Name: "x"}, d, 2*time.Second)
	if r.WakeupsPS != 4 || r.TopPS != 2 || r.CPUPct != 100*221/1e9/2 || !r.WithinGoal {
		t.Errorf("result %+v", r)
	}
	if busy := resultOf(Case{}, delta{Slices: 41}, 2*time.Second); busy.WithinGoal {
		t.Errorf("20.5 wake-ups/s counted within the goal: %+v", busy)
	}
}

func TestCases(t *testing.T) {
	cs, err := Cases(Binaries{Gocached: "/g", Memcached: "/m45", Memcached1618: "/m18"},
		[]string{"epoll", "go", "memcached", "memcached-1.6.18"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	got := strings.Join(names, "; ")
	for _, want := range []string{"epoll; epoll, 100 idle clients; epoll, 10000 items; epoll, --metrics-listen", "go, 100 idle clients",
		"memcached, 10000 items", "memcached-1.6.18, 100 idle clients"} {
		if !strings.Contains(got, want) {
			t.Errorf("cases %q lack %q", got, want)
		}
	}
	if cs[len(cs)-1].Spec.Path != "/m18" || cs[len(cs)-3].Spec.Path != "/m45" {
		t.Errorf("memcached binaries mixed up: %+v", cs)
	}
	if _, err := Cases(Binaries{}, []string{"redis"}, ""); err == nil {
		t.Error("unknown target accepted")
	}
}

// TestMeasureRealServer measures a real gocached briefly: the numbers are a
// benchmark's business, but the measurement must see the server's threads
// and its clients must have been served.
func TestMeasureRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs gocached")
	}
	bin, err := testproc.GocachedBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := Case{Name: "epoll", Spec: testproc.Gocached(bin, "epoll", "-l", "127.0.0.1", "-U", "0"), IdleConns: 3, Items: 50}
	r, err := Measure(ctx, c, 100*time.Millisecond, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Threads < 2 || r.Window < 500*time.Millisecond || r.IdleConns != 3 {
		t.Errorf("implausible measurement: %+v", r)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, []Result{r}); err != nil || !strings.Contains(b.String(), "| epoll | ") {
		t.Errorf("table %q, %v", b.String(), err)
	}
}
