package integration

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFileLimitMatchesMemcached runs memcached and gocached under an open
// files limit of 64 (soft and hard, set by util-linux's prlimit). With -c
// 1024 memcached cannot have its connections and exits 71 with its
// message; gocached must too, rather than start and leave clients beyond
// the limit waiting. With -c 40 both start, and gocached serves.
func TestFileLimitMatchesMemcached(t *testing.T) {
	prlimit := requireTool(t, "prlimit")
	limit := "--nofile=64:64"
	// With CAP_SYS_RESOURCE the hard limit may be raised, and both servers
	// start: there is no refusal to compare.
	compareRefusalUnderLimit(t, limit, "-c", "1024")

	// Under the limit: gocached starts and serves as many clients as -c
	// allows; the listener is one of the 40.
	sp := spec(t, target{name: "epoll", engine: "epoll"}, "-l", "127.0.0.1", "-U", "0", "-c", "40")
	sp.Wrap = []string{prlimit, limit} // prlimit execs the server
	p := startSpec(t, sp, false)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 39 {
		c, err := net.DialTimeout("tcp", p.Addr(), 2*time.Second)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("version\r\n")); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil || !strings.HasPrefix(string(buf[:n]), "VERSION ") {
			t.Fatalf("client %d under -c 40 and %s: %q, %v", i, limit, buf[:n], err)
		}
	}
}

// TestCoreLimitMatchesMemcached: -r under a core file limit of 0 that may
// not be raised fails to start with memcached's message and status 71.
func TestCoreLimitMatchesMemcached(t *testing.T) {
	compareRefusalUnderLimit(t, "--core=0:0", "-r")
}

// compareRefusalUnderLimit runs memcached and gocached with flags under
// prlimit's limit, where memcached refuses to start with status 71, and
// requires gocached's status and stderr to be memcached's. The test is
// skipped where memcached starts: this process may then raise the limit.
func compareRefusalUnderLimit(t *testing.T, limit string, flags ...string) {
	t.Helper()
	mc := referenceMemcached(t)
	prlimit := requireTool(t, "prlimit")
	gc := gocachedBinary(t)
	args := append([]string{"-p", "0", "-U", "0"}, flags...)
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	mStatus, mErr := runCLI(t, prlimit, append([]string{limit, mc}, args...))
	if mStatus != 71 {
		t.Skipf("memcached %q under %s: status %d (%q), not its refusal: this process may raise the limit", flags, limit, mStatus, mErr)
	}
	gStatus, gErr := runCLI(t, prlimit, append([]string{limit, gc}, args...))
	if gStatus != mStatus || gErr != mErr {
		t.Errorf("%q under %s:\nmemcached: status %d, stderr %q\ngocached:  status %d, stderr %q", flags, limit, mStatus, mErr, gStatus, gErr)
	}
}
