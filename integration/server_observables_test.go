package integration

import (
	"bufio"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestObservables runs one client script against memcached -t 1 and against
// each gocached engine (also -t 1, so that every server has one worker and
// the listener count cannot depend on the machine) and asserts that gocached
// shows what memcached shows: the names of "stats" (and their order) and of
// "stats settings"; in "stats conns" the number of listeners, the fields and
// address forms (tcp:/tcp6:, ports masked) of every entry and the state of
// each client; total_connections and curr_connections; and whether a client
// on ::1 is served. It runs once with the default wildcard listen and once
// with -l 127.0.0.1. memcached's values are measured, not written down, so
// the test follows the installed memcached.
//
// Every assertion is its own subtest (TestObservables/LISTEN/ENGINE/WHAT),
// so a failure names the engine and the observable that differs.
func TestObservables(t *testing.T) {
	referenceMemcached(t)
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"wildcard", nil},
		{"loopback", []string{"-l", "127.0.0.1"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ref := observe(t, referenceTarget, mode.flags)
			t.Logf("memcached %s:\n%s", strings.Join(mode.flags, " "), ref)
			runTargets(t, engineTargets, func(t *testing.T, tg target) {
				got := observe(t, tg, mode.flags)
				t.Logf("%s:\n%s", tg.name, got)
				compareObservations(t, ref, got)
			})
		})
	}
}

// Client roles in the script. Each is one connection from this process.
const (
	roleQuerier = "querier" // sends the stats commands
	roleUsed    = "used"    // one version round trip, then idle
	roleFresh   = "fresh"   // connected, never sent a byte
	roleIPv6    = "ipv6"    // like used, but from ::1
)

// observation is what one server showed to the script.
type observation struct {
	stats, settings []string // stat names in reply order
	listeners       []string // listener entries of stats conns, masked, sorted
	nClients        int      // client entries of stats conns
	clients         map[string]connEntry
	total, curr     string // total_connections, curr_connections
	// After a further client on ::1 (only when ipv6 is true).
	ipv6                bool
	ipv6Err             string
	totalIPv6, currIPv6 string
	clientsIPv6         map[string]connEntry
}

func (o *observation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %d stats, %d settings\n", len(o.stats), len(o.settings))
	fmt.Fprintf(&b, "  listeners: %s\n", strings.Join(o.listeners, " | "))
	fmt.Fprintf(&b, "  %d clients:\n", o.nClients)
	for _, r := range []string{roleQuerier, roleUsed, roleFresh} {
		fmt.Fprintf(&b, "  %s: %s\n", r, o.clients[r])
	}
	fmt.Fprintf(&b, "  total_connections %s, curr_connections %s\n", o.total, o.curr)
	if o.ipv6 {
		fmt.Fprintf(&b, "  ::1 served; then %s: %s; total_connections %s, curr_connections %s\n",
			roleIPv6, o.clientsIPv6[roleIPv6], o.totalIPv6, o.currIPv6)
	} else {
		fmt.Fprintf(&b, "  ::1 not served: %s\n", o.ipv6Err)
	}
	return b.String()
}

// observe starts tg with flags (no -l: the wildcard) and runs the script.
func observe(t *testing.T, tg target, flags []string) *observation {
	t.Helper()
	srv := startSpec(t, spec(t, tg, append([]string{"-U", "0", "-t", "1"}, flags...)...), true)
	// The readiness probe was the first connection; these are the next three.
	q := dialRaw(t, srv.Addr())
	used := dialRaw(t, srv.Addr())
	fresh := dialRaw(t, srv.Addr())
	if got := used.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
		t.Fatalf("version: %q", got)
	}
	roles := map[string]string{localPort(q): roleQuerier, localPort(used): roleUsed, localPort(fresh): roleFresh}
	o := &observation{}
	// Wait (bounded) until the server lists exactly our three clients and
	// has finished writing to them: the probe's close, the fresh accept and
	// the step out of conn_mwrite after a reply the client has already
	// read are asynchronous in every server (a loaded machine shows them).
	conns := settledConns(q, roles, func(conns []connEntry, clients map[string]connEntry) bool {
		return countClients(conns) == 3 && clients[roleUsed]["state"] != "conn_mwrite"
	})
	o.nClients = countClients(conns)
	o.listeners, o.clients = classify(conns, roles)
	o.stats = statNamesOf(q, "")
	o.settings = statNamesOf(q, "settings")
	s := q.stats("")
	o.total, o.curr = s["total_connections"], s["curr_connections"]

	// A fourth client on ::1: served on a wildcard listen by memcached.
	c6, err := net.DialTimeout("tcp", net.JoinHostPort("::1", strconv.Itoa(srv.Port())), 2*time.Second)
	if err != nil {
		o.ipv6Err = err.Error()
		return o
	}
	defer c6.Close()
	c6.SetDeadline(time.Now().Add(5 * time.Second))
	r6 := bufio.NewReader(c6)
	if _, err := c6.Write([]byte("version\r\n")); err != nil {
		o.ipv6Err = "write on ::1: " + err.Error()
		return o
	}
	if got, err := r6.ReadString('\n'); err != nil || !strings.HasPrefix(got, "VERSION ") {
		o.ipv6Err = fmt.Sprintf("version on ::1: %q, %v", got, err)
		return o
	}
	o.ipv6 = true
	roles[strconv.Itoa(c6.LocalAddr().(*net.TCPAddr).Port)] = roleIPv6
	// The same step out of conn_mwrite, for the reply just read (seen on
	// the go engine on a loaded machine).
	_, o.clientsIPv6 = classify(settledConns(q, roles, func(_ []connEntry, clients map[string]connEntry) bool {
		return clients[roleIPv6]["state"] != "conn_mwrite"
	}), roles)
	s = q.stats("")
	o.totalIPv6, o.currIPv6 = s["total_connections"], s["curr_connections"]
	return o
}

// settledConns polls `stats conns` on q until ready holds of its entries
// (and the clients classify finds in them by role), or 30 s have passed,
// and returns the last entries.
func settledConns(q *rawConn, roles map[string]string, ready func([]connEntry, map[string]connEntry) bool) []connEntry {
	for deadline := time.Now().Add(30 * time.Second); ; {
		conns := statsConns(q)
		_, clients := classify(conns, roles)
		if ready(conns, clients) || time.Now().After(deadline) {
			return conns
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compareObservations asserts got shows what ref (memcached) showed.
func compareObservations(t *testing.T, ref, got *observation) {
	check := func(what string, fn func(t *testing.T)) { t.Run(what, fn) }
	check("stats_names", func(t *testing.T) { sameSet(t, "stats", ref.stats, got.stats) })
	check("stats_order", func(t *testing.T) {
		if common := inBoth(ref.stats, got.stats); !slices.Equal(inBoth(common, ref.stats), inBoth(common, got.stats)) {
			t.Errorf("the names both print come in a different order:\n got  %v\n want %v",
				inBoth(common, got.stats), inBoth(common, ref.stats))
		}
	})
	check("settings_names", func(t *testing.T) { sameSet(t, "stats settings", ref.settings, got.settings) })
	check("conns_listeners", func(t *testing.T) {
		if len(got.listeners) != len(ref.listeners) {
			t.Errorf("%d listener entries, memcached has %d", len(got.listeners), len(ref.listeners))
		}
		if !slices.Equal(got.listeners, ref.listeners) {
			t.Errorf("listener entries:\n got  %s\n want %s", strings.Join(got.listeners, " | "), strings.Join(ref.listeners, " | "))
		}
	})
	check("conns_clients", func(t *testing.T) {
		if got.nClients != ref.nClients {
			t.Errorf("%d client entries, memcached has %d", got.nClients, ref.nClients)
		}
	})
	for _, role := range []string{roleQuerier, roleUsed, roleFresh} {
		compareClient(t, role, ref.clients[role], got.clients[role])
	}
	check("total_connections", func(t *testing.T) {
		if got.total != ref.total {
			t.Errorf("total_connections %s, memcached %s", got.total, ref.total)
		}
	})
	check("curr_connections", func(t *testing.T) {
		if got.curr != ref.curr {
			t.Errorf("curr_connections %s, memcached %s", got.curr, ref.curr)
		}
	})
	check("ipv6_served", func(t *testing.T) {
		if got.ipv6 != ref.ipv6 {
			t.Errorf("client on ::1 served: %v (%s), memcached: %v (%s)", got.ipv6, got.ipv6Err, ref.ipv6, ref.ipv6Err)
		}
	})
	if !got.ipv6 || !ref.ipv6 {
		return
	}
	compareClient(t, roleIPv6, ref.clientsIPv6[roleIPv6], got.clientsIPv6[roleIPv6])
	check("total_connections_ipv6", func(t *testing.T) {
		if got.totalIPv6 != ref.totalIPv6 || got.currIPv6 != ref.currIPv6 {
			t.Errorf("after the ::1 client: total_connections %s curr_connections %s, memcached %s and %s",
				got.totalIPv6, got.currIPv6, ref.totalIPv6, ref.currIPv6)
		}
	})
}

// compareClient asserts a client's state, and apart from it its fields and
// address forms, as two subtests: conns_ROLE_state and conns_ROLE_addr.
func compareClient(t *testing.T, role string, ref, got connEntry) {
	t.Run("conns_"+role+"_state", func(t *testing.T) {
		if got["state"] != ref["state"] {
			t.Errorf("%s client state %q, memcached %q", role, got["state"], ref["state"])
		}
	})
	t.Run("conns_"+role+"_addr", func(t *testing.T) {
		if g, w := got.without("state"), ref.without("state"); g != w {
			t.Errorf("%s client entry:\n got  %s\n want %s", role, g, w)
		}
	})
}

// connEntry is one connection of "stats conns": its fields by name.
type connEntry map[string]string

// clientPortRE finds a client's own port at the end of its addr.
var clientPortRE = regexp.MustCompile(`:(\d+)$`)

// portRE masks the port at the end of an address: "tcp:127.0.0.1:5" -> "tcp:127.0.0.1:<port>".
var portRE = regexp.MustCompile(`:\d+$`)

// String is the entry with ports masked and the seconds idle dropped (they
// tick), fields sorted: "addr=tcp:127.0.0.1:<port> listen_addr=... state=...".
func (e connEntry) String() string {
	var fs []string
	for k, v := range e {
		switch k {
		case "secs_since_last_cmd":
			v = "<n>"
		case "addr", "listen_addr":
			v = portRE.ReplaceAllString(v, ":<port>")
		}
		fs = append(fs, k+"="+v)
	}
	sort.Strings(fs)
	return strings.Join(fs, " ")
}

// without is String without the named field.
func (e connEntry) without(field string) string {
	c := connEntry{}
	for k, v := range e {
		if k != field {
			c[k] = v
		}
	}
	return c.String()
}

func (e connEntry) listener() bool { return e["state"] == "conn_listening" }

// statsConns reads "stats conns" ("STAT <fd>:<field> <value>") by fd.
func statsConns(c *rawConn) []connEntry {
	c.t.Helper()
	byFD := map[string]connEntry{}
	var order []string
	for name, v := range c.stats("conns") {
		fd, field, ok := strings.Cut(name, ":")
		if !ok {
			c.t.Fatalf("stats conns: bad name %q", name)
		}
		if byFD[fd] == nil {
			byFD[fd] = connEntry{}
			order = append(order, fd)
		}
		byFD[fd][field] = v
	}
	sort.Strings(order)
	out := make([]connEntry, 0, len(order))
	for _, fd := range order {
		out = append(out, byFD[fd])
	}
	return out
}

func countClients(es []connEntry) int {
	n := 0
	for _, e := range es {
		if !e.listener() {
			n++
		}
	}
	return n
}

// classify splits entries into masked listener entries (sorted) and client
// entries by role, found by the client's own port at the end of addr.
// Entries of clients not in roles are listed under "other:N".
func classify(es []connEntry, roles map[string]string) (listeners []string, clients map[string]connEntry) {
	clients = map[string]connEntry{}
	others := 0
	for _, e := range es {
		if e.listener() {
			listeners = append(listeners, e.String())
			continue
		}
		m := clientPortRE.FindStringSubmatch(e["addr"])
		if m != nil && roles[m[1]] != "" {
			clients[roles[m[1]]] = e
			continue
		}
		others++
		clients["other:"+strconv.Itoa(others)] = e
	}
	sort.Strings(listeners)
	return listeners, clients
}

// statNamesOf returns the names of a "stats [arg]" reply in reply order.
func statNamesOf(c *rawConn, arg string) []string {
	c.t.Helper()
	names, _ := c.statsInOrder(arg)
	return names
}

// sameSet reports names only one side prints.
func sameSet(t *testing.T, what string, want, got []string) {
	t.Helper()
	if extra := minus(got, want); len(extra) > 0 {
		t.Errorf("%s: gocached prints %d name(s) memcached does not: %v", what, len(extra), extra)
	}
	if lack := minus(want, got); len(lack) > 0 {
		t.Errorf("%s: gocached lacks %d name(s) memcached prints: %v", what, len(lack), lack)
	}
}

// minus is a without b's elements, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// inBoth is a's elements that b also has, in a's order.
func inBoth(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func localPort(c *rawConn) string {
	return strconv.Itoa(c.conn.LocalAddr().(*net.TCPAddr).Port)
}
