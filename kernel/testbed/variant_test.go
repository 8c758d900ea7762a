//go:build linux

package testbed

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

func TestVariantDefaults(t *testing.T) {
	v, err := Variant{}.withDefaults()
	if err != nil || v.Queues != Queues || v.Threaded {
		t.Errorf("zero variant = %+v, %v", v, err)
	}
	for _, bad := range []Variant{{Queues: -1}, {Queues: maxQueues + 1}, {ServerCPUs: "x"}, {ClientCPUs: "3-1"}} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("variant %+v accepted", bad)
		}
	}
	if s := (Variant{Queues: 1, Threaded: true}).String(); s != "threaded-1q" {
		t.Errorf("String = %s", s)
	}
	if s := (Variant{}).String(); s != "plain-4q" {
		t.Errorf("String = %s", s)
	}
}

// upVariant is Up for a variant: the same skip/fail rule and cleanup.
func upVariant(t *testing.T, v Variant) *Bed {
	t.Helper()
	if d := decide(Available(), os.Getenv(RequireEnv)); d.reason != "" {
		if d.fail {
			t.Fatal(d.reason)
		}
		t.Skip(d.reason)
	}
	b, err := NewVariant(UniqueName(), v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("teardown of %s: %v", b.Name, err)
		}
	})
	return b
}

// TestThreadedOneQueueBed builds the variant the scenario runner uses on a
// 2-CPU machine: one queue per end, threaded NAPI, each end's kthread
// pinned to its side's CPU. Traffic must still go through the NAPI (a
// nonzero NAPI ID), and the kthreads must be the bed's own and pinned.
func TestThreadedOneQueueBed(t *testing.T) {
	srvCPU, cliCPU := "0", "0"
	if runtime.NumCPU() > 1 {
		srvCPU = "1"
	}
	b := upVariant(t, Variant{Queues: 1, Threaded: true, ServerCPUs: srvCPU, ClientCPUs: cliCPU})
	checkBed(t, b)
	ids := checkNAPI(t, b, 8)
	for _, e := range []struct {
		ns, dev, cpu string
		pids         []int
	}{{b.ServerNS, b.ServerDev, srvCPU, b.ServerKthreads}, {b.ClientNS, b.ClientDev, cliCPU, b.ClientKthreads}} {
		if st, err := ThreadedState(e.ns, e.dev); err != nil || st != "1" {
			t.Errorf("%s threaded = %q, %v", e.dev, st, err)
		}
		if len(e.pids) != 1 {
			t.Fatalf("%s: kthreads %v, want 1", e.dev, e.pids)
		}
		name := KthreadName(e.pids[0])
		if !strings.HasPrefix(name, "napi/"+e.dev+"-") {
			t.Errorf("%s: kthread %d is %q", e.dev, e.pids[0], name)
		}
		aff, err := Affinity(e.pids[0])
		if err != nil || len(aff) != 1 || strings.TrimSpace(e.cpu) != itoa(aff[0]) {
			t.Errorf("%s kthread %d affinity %v (%v), want %s", e.dev, e.pids[0], aff, err, e.cpu)
		}
	}
	// The server kthread polls the NAPI every accepted socket reported.
	if name := KthreadName(b.ServerKthreads[0]); !strings.HasSuffix(name, "-"+itoa(int(ids[0]))) {
		t.Errorf("server kthread %q does not poll NAPI %d", name, ids[0])
	}
	// Rebuilding the same bed with another queue count is refused.
	if _, err := NewVariant(b.Name, Variant{Queues: 2}); err == nil {
		t.Error("rebuilt a 1-queue bed as a 2-queue one")
	}
	// Rebuilding it plain turns threading off again.
	b2, err := NewVariant(b.Name, Variant{Queues: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := ThreadedState(b2.ServerNS, b2.ServerDev); st != "0" || b2.ServerKthreads != nil {
		t.Errorf("plain rebuild: threaded %q, kthreads %v", st, b2.ServerKthreads)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// The script's threaded 1-queue variant matches the Go one: one queue,
// threading on, and the kthread it pinned is the one netlink names.
func TestScriptThreadedVariant(t *testing.T) {
	b := upVariant(t, Variant{Queues: 1}) // reserves the name and the cleanup
	cmd := testproc.Command("../testbed.sh", "up", b.Name)
	cmd.Env = append(os.Environ(), "QUEUES=1", "THREADED=1", "SRV_CPUS=0", "CLI_CPUS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("testbed.sh up: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "rxqueues=1 gro=on tso=off threaded=1") {
		t.Errorf("testbed.sh up output:\n%s", out)
	}
	pids, err := napiThreadPIDs(b.ServerNS, b.ServerIfindex)
	if err != nil || len(pids) != 1 {
		t.Fatalf("server kthreads %v, %v", pids, err)
	}
	want := "kthread " + KthreadName(pids[0]) + " pid=" + strconv.Itoa(pids[0]) + " cpus=0"
	if !strings.Contains(string(out), want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if aff, err := Affinity(pids[0]); err != nil || len(aff) != 1 || aff[0] != 0 {
		t.Errorf("kthread affinity %v %v", aff, err)
	}
	// A mismatched queue count is refused, and the bed is left as it was.
	cmd = testproc.Command("../testbed.sh", "up", b.Name)
	cmd.Env = append(os.Environ(), "QUEUES=3")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "exists with 1 queues") {
		t.Errorf("QUEUES=3 on a 1-queue bed: %v\n%s", err, out)
	}
	if !b.Exists() {
		t.Error("refused up removed the bed")
	}
}
