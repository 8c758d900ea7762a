package integration

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Bounds of one linearizability run: 16 clients of 200 operations each over
// 4 keys (about 800 operations a key, so the clients contend on every key),
// and how long porcupine may search before it answers Unknown.
const (
	linClients      = 16
	linOpsPerClient = 200
	linKeys         = 4
	linCheckTimeout = 60 * time.Second
	linOpTimeout    = 10 * time.Second
)

// linThreads are the server thread counts every engine is checked with: one
// reactor, and several, so that clients on different reactors race.
var linThreads = []int{1, 4}

// TestLinearizability runs 16 concurrent clients issuing random get, gets,
// set, cas, delete and incr over a few keys against the real binary, records
// every operation's call and return time, and checks with porcupine that
// the history is linearizable under memcached's semantics (hostile_linmodel_test.go),
// on every engine of the harness's table, with one and with four threads.
// memcached runs the same check, which validates the model against the
// reference. memcached 1.6.45 has races of its own that a loaded machine
// occasionally shows (casRewriteRace; a set's unique taken before its lock,
// linModelReference; and at least one more, seen twice in CI and not yet
// caught with its history): it gets refLinAttempts fresh servers, and fails
// only if every history breaks the model, as a model error would.
func TestLinearizability(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, threads := range linThreads {
			t.Run(fmt.Sprintf("t%d", threads), func(t *testing.T) {
				model, attempts := linModel, 1
				if tg.isReference() {
					model, attempts = linModelReference, refLinAttempts
				}
				for attempt := range attempts {
					p := startServer(t, tg, "-t", strconv.Itoa(threads))
					h := runLinWorkload(t, p.Addr(), uint64(threads+100*attempt), false)
					if linearizable(t, model, h, tg.isReference(), attempt+1 < attempts) {
						return
					}
				}
			})
		}
	})
}

// refLinAttempts is how many histories memcached gets (TestLinearizability).
const refLinAttempts = 3

// linearizable checks h against model and says whether the check is over:
// the history passed, or failed for good (reported), rather than failed on
// a reference server that gets another try (retry).
func linearizable(t *testing.T, model porcupine.Model, h []porcupine.Operation, reference, retry bool) bool {
	res, info := porcupine.CheckOperationsVerbose(model, h, linCheckTimeout)
	switch res {
	case porcupine.Illegal:
		if race, ok := casRewriteRace(h); ok && reference {
			t.Logf("memcached's history is not linearizable, by its known race: %s (%s)", race, visualize(t, model, info))
			return true
		}
		if retry {
			t.Logf("memcached's history of %d operations is not linearizable (%s); trying a fresh server", len(h), visualize(t, model, info))
			return false
		}
		t.Errorf("history of %d operations is not linearizable; %s", len(h), visualize(t, model, info))
	case porcupine.Unknown:
		t.Logf("porcupine found no violation in %v but did not finish the search", linCheckTimeout)
	default:
		t.Logf("%d operations, linearizable: %s", len(h), linSummary(h))
	}
	return true
}

// casRewriteRace finds memcached's one known departure from
// linearizability in this workload: an incr that cannot change an item in
// place (a concurrent get holds it) links a new item and then writes the
// new item's CAS into the old one (memcached.c do_add_delta), and a gets
// that holds the old item and builds its reply after that reports the old
// value with the new unique. The signature is two gets of a key with the
// same unique and different values, which no linearizable server shows.
func casRewriteRace(h []porcupine.Operation) (string, bool) {
	type version struct {
		key    int
		unique uint64
	}
	seen := map[version]uint64{}
	for _, op := range h {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if in.kind != linGets || !out.found {
			continue
		}
		v := version{in.key, out.unique}
		if prev, ok := seen[v]; ok && prev != out.val {
			return fmt.Sprintf("gets(k%d) returned u%d with %d and with %d", in.key, out.unique, prev, out.val), true
		}
		seen[v] = out.val
	}
	return "", false
}

// TestLinearizabilityCatchesBrokenCAS shows that the test fails on a server
// whose cas ignores the unique: the clients send cas with the unique the
// key has just before the cas (read by an extra gets inside the operation's
// interval) while recording the unique they observed earlier, which is
// exactly what a server that stores on any unique would produce. A few
// workloads are tried: a violation needs a cas to race with another write.
func TestLinearizabilityCatchesBrokenCAS(t *testing.T) {
	tg := engineTargets[0]
	if !wantTarget(tg.name) {
		t.Skipf("target %s not in GOCACHED_IT_TARGETS", tg.name)
	}
	p := startServer(t, tg, "-t", "4")
	for attempt := range 3 {
		h := runLinWorkload(t, p.Addr(), uint64(100+attempt), true)
		res := porcupine.CheckOperationsTimeout(linModel, h, linCheckTimeout)
		t.Logf("attempt %d: %d operations with a cas that ignores uniques: %s", attempt, len(h), res)
		if res == porcupine.Illegal {
			return
		}
		// Fresh keys for the next attempt: the model starts from absent keys.
		c := dialRaw(t, p.Addr())
		c.expect("flush_all\r\n", "OK\r\n")
	}
	t.Fatal("no violation found in a history whose cas ignored the unique")
}

// linSummary counts outcomes, to show the clients contended: cas both
// won and lost, reads hit and missed.
func linSummary(h []porcupine.Operation) string {
	counts := map[string]int{}
	for _, op := range h {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		outcome := out.res.String()
		if in.kind == linGet || in.kind == linGets || in.kind == linIncr {
			outcome = map[bool]string{true: "hit", false: "miss"}[out.found]
		}
		counts[in.kind.String()+" "+outcome]++
	}
	var parts []string
	for k := range linKindNames {
		for _, o := range []string{"hit", "miss", "STORED", "EXISTS", "NOT_FOUND", "DELETED"} {
			if n := counts[linKindNames[k]+" "+o]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s %d", linKindNames[k], o, n))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// visualize writes porcupine's HTML view of a failed check next to the
// test's temporary files and says where.
func visualize(t *testing.T, model porcupine.Model, info porcupine.LinearizationInfo) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	path := filepath.Join(os.TempDir(), "gocached-lin-"+name+".html")
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		return fmt.Sprintf("visualization failed: %v", err)
	}
	return "see " + path
}

// runLinWorkload runs the clients to completion and returns their history.
// brokenCAS makes the clients imitate a server whose cas ignores uniques.
func runLinWorkload(t *testing.T, addr string, seed uint64, brokenCAS bool) []porcupine.Operation {
	t.Helper()
	start := time.Now()
	histories := make([][]porcupine.Operation, linClients)
	errs := make([]error, linClients)
	var wg sync.WaitGroup
	for id := range linClients {
		wg.Go(func() {
			histories[id], errs[id] = linClient(addr, id, seed, start, brokenCAS)
		})
	}
	wg.Wait()
	var h []porcupine.Operation
	for id := range linClients {
		if errs[id] != nil {
			t.Fatalf("client %d: %v", id, errs[id])
		}
		h = append(h, histories[id]...)
	}
	return h
}

// linClient is one client: its own connection, its own random stream, and
// the last unique it saw per key (a client only sends uniques it observed).
func linClient(addr string, id int, seed uint64, start time.Time, brokenCAS bool) ([]porcupine.Operation, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	c := &linConn{nc: nc, r: bufio.NewReader(nc)}
	rng := rand.New(rand.NewPCG(seed, uint64(id)))
	seen := make([]uint64, linKeys)
	ops := make([]porcupine.Operation, 0, linOpsPerClient)
	follow := -1 // a key whose gets just hit: a read-modify-write cas is likely next
	for i := range linOpsPerClient {
		in := linInput{key: rng.IntN(linKeys)}
		r := rng.IntN(100)
		if follow >= 0 && rng.IntN(2) == 0 {
			in.key, r = follow, 55
		}
		follow = -1
		switch {
		case r < 10:
			in.kind = linGet
		case r < 35:
			in.kind = linGets
		case r < 55:
			in.kind, in.val = linSet, uint64(id+1)<<32|uint64(i)<<8
		case r < 80:
			in.kind, in.val, in.unique = linCas, uint64(id+1)<<32|uint64(i)<<8|1<<7, seen[in.key]
			if in.unique == 0 {
				in.kind, in.val = linGets, 0 // nothing observed yet to cas with
			}
		case r < 88:
			in.kind = linDelete
		default:
			in.kind, in.delta = linIncr, uint64(1+rng.IntN(9))
		}
		call := time.Since(start).Nanoseconds()
		out, err := c.do(in, brokenCAS)
		ret := time.Since(start).Nanoseconds()
		if err != nil {
			return nil, fmt.Errorf("%v on k%d: %w", in.kind, in.key, err)
		}
		if in.kind == linGets && out.found {
			seen[in.key], follow = out.unique, in.key
		}
		ops = append(ops, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
	}
	return ops, nil
}

// linConn speaks the text protocol for the workload's commands.
type linConn struct {
	nc net.Conn
	r  *bufio.Reader
}

func linKey(k int) string { return "lin:k" + strconv.Itoa(k) }

// do sends one request and parses its reply.
func (c *linConn) do(in linInput, brokenCAS bool) (linOutput, error) {
	_ = c.nc.SetDeadline(time.Now().Add(linOpTimeout))
	key := linKey(in.key)
	var req string
	switch in.kind {
	case linGet, linGets:
		req = in.kind.String() + " " + key + "\r\n"
	case linSet:
		v := strconv.FormatUint(in.val, 10)
		req = fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", key, len(v), v)
	case linCas:
		unique := in.unique
		if brokenCAS {
			cur, err := c.do(linInput{kind: linGets, key: in.key}, false)
			if err != nil {
				return linOutput{}, err
			}
			if cur.found {
				unique = cur.unique
			}
		}
		v := strconv.FormatUint(in.val, 10)
		req = fmt.Sprintf("cas %s 0 0 %d %d\r\n%s\r\n", key, len(v), unique, v)
	case linDelete:
		req = "delete " + key + "\r\n"
	case linIncr:
		req = fmt.Sprintf("incr %s %d\r\n", key, in.delta)
	}
	if _, err := c.nc.Write([]byte(req)); err != nil {
		return linOutput{}, err
	}
	line, err := c.line()
	if err != nil {
		return linOutput{}, err
	}
	switch in.kind {
	case linGet, linGets:
		return c.value(line, key, in.kind == linGets)
	case linIncr:
		if line == "NOT_FOUND" {
			return linOutput{res: resNotFound}, nil
		}
		n, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			return linOutput{}, fmt.Errorf("incr reply %q", line)
		}
		return linOutput{found: true, val: n}, nil
	}
	for r, name := range linResultNames {
		if r != int(resNone) && line == name {
			return linOutput{res: linResult(r)}, nil
		}
	}
	return linOutput{}, fmt.Errorf("reply %q to %q", line, strings.TrimSpace(req))
}

// line reads one reply line without its CRLF.
func (c *linConn) line() (string, error) {
	l, err := c.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read: %w (got %q)", err, l)
	}
	return strings.TrimSuffix(l, "\r\n"), nil
}

// value parses the reply of get/gets of one key. incr pads a value that got
// shorter with spaces, as memcached does, so the number is trimmed.
func (c *linConn) value(line, key string, withCAS bool) (linOutput, error) {
	if line == "END" {
		return linOutput{}, nil
	}
	f := strings.Fields(line)
	want := 4
	if withCAS {
		want = 5
	}
	if len(f) != want || f[0] != "VALUE" || f[1] != key {
		return linOutput{}, fmt.Errorf("value header %q for %s", line, key)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil || n < 0 || n > 64 {
		return linOutput{}, fmt.Errorf("value header %q", line)
	}
	out := linOutput{found: true}
	if withCAS {
		if out.unique, err = strconv.ParseUint(f[4], 10, 64); err != nil {
			return linOutput{}, fmt.Errorf("value header %q", line)
		}
	}
	data := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, data); err != nil {
		return linOutput{}, err
	}
	if out.val, err = strconv.ParseUint(strings.TrimRight(string(data[:n]), " "), 10, 64); err != nil {
		return linOutput{}, fmt.Errorf("value %q of %s is not a number", data[:n], key)
	}
	if end, err := c.line(); err != nil || end != "END" {
		return linOutput{}, fmt.Errorf("after value of %s: %q, %v", key, end, err)
	}
	return out, nil
}
