package protocol

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/store"
)

// Settings that gate commands, each checked against memcached started with
// the matching flag.

type flagCase struct {
	name  string
	flags []string        // memcached's
	set   func(*Env)      // the same for gocached
	in    string          // one batch
	steps []string        // or one read each, on one connection
	want  string          // memcached's reply
	keep  *regexp.Regexp  // when set, only matching lines are compared
	check func(*Env) bool // extra state check on gocached
	// since: the memcached release after 1.6.18 whose reply want is
	// (checked by hand against 1.6.45; Debian's 1.6.18 is not asked).
	since string
}

var statsSettingLine = func(names ...string) *regexp.Regexp {
	return regexp.MustCompile(`^(STAT (` + strings.Join(names, "|") + `) .*|END|(\w+_)?ERROR.*|OK|STORED|RESET)$`)
}

func flagCases(t *testing.T) []flagCase {
	// memcached reads the file as an unprivileged user: t.TempDir's
	// parent is private, so use a directory of its own.
	dir, err := os.MkdirTemp("", "gocached-auth")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	authFile := filepath.Join(dir, "auth")
	if err := os.WriteFile(authFile, []byte("user:pass\nother:secret word\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auth, err := LoadASCIIAuth(authFile)
	if err != nil {
		t.Fatal(err)
	}
	return []flagCase{
		{name: "-F", flags: []string{"-F"}, set: func(e *Env) { e.Settings.FlushDisabled = true },
			in: "flush_all\r\nflush_all 10\r\nflush_all noreply\r\nflush_all abc\r\nflush_all 1 2 3\r\nstats settings\r\n",
			want: lines("CLIENT_ERROR flush_all not allowed", "CLIENT_ERROR flush_all not allowed", "CLIENT_ERROR flush_all not allowed",
				"CLIENT_ERROR flush_all not allowed", "STAT flush_enabled no", "END"),
			keep:  statsSettingLine("flush_enabled"),
			check: func(e *Env) bool { return e.Store.Stats().CmdFlush == 5 }, since: "1.6.40"},
		{name: "-X", flags: []string{"-X"}, set: func(e *Env) { e.Settings.DumpDisabled = true },
			in:   "stats cachedump 1 1\r\nstats cachedump\r\nlru_crawler metadump all\r\nstats settings\r\n",
			want: lines("CLIENT_ERROR stats cachedump not allowed", "CLIENT_ERROR stats cachedump not allowed", "ERROR metadump not allowed", "STAT dump_enabled no", "END"),
			keep: statsSettingLine("dump_enabled")},
		{name: "-W", flags: []string{"-W"}, set: func(e *Env) { e.Settings.WatchDisabled = true },
			in: "watch\r\nwatch fetchers\r\nwatch noreply\r\nversion\r\n",
			// watch takes no noreply in memcached 1.6.45.
			want: lines("CLIENT_ERROR watch commands not allowed", "CLIENT_ERROR watch commands not allowed",
				"CLIENT_ERROR watch commands not allowed", "VERSION 1.6.18"), since: "1.6.40"},
		{name: "-A bad mode", flags: []string{"-A"}, set: func(e *Env) { e.Settings.ShutdownEnabled = true },
			in:   "shutdown x\r\nshutdown graceful x\r\nstats settings\r\n",
			want: lines("CLIENT_ERROR invalid shutdown mode", "CLIENT_ERROR invalid shutdown mode", "STAT shutdown_command yes", "END"),
			keep: statsSettingLine("shutdown_command")},
		// memcached keeps one reply object while a connection is not
		// authenticated, so of several auth replies in one read only the
		// last is sent: these cases go one request per read.
		{name: "-Y", flags: []string{"-Y", authFile}, set: func(e *Env) { e.ASCIIAuth = auth },
			steps: []string{"get a\r\n", "version\r\n", "set a 0 0 10\r\nuser wrong\r\n", "set a 0 0 4\r\nuser\r\n", "set a 0 0 9\r\nuser pass\r\n",
				"set a 0 0 1\r\nx\r\nget a\r\nstats settings\r\n"},
			want: lines("CLIENT_ERROR unauthenticated", "CLIENT_ERROR unauthenticated", "CLIENT_ERROR authentication failure",
				"CLIENT_ERROR bad authentication token format", "STORED", "STORED", "VALUE a 0 1", "x", "END",
				"STAT auth_enabled_ascii "+authFile, "END"),
			keep:  regexp.MustCompile(`^(STAT auth_enabled_ascii .*|END|(\w+_)?ERROR.*|STORED|VALUE .*|x)$`),
			check: func(e *Env) bool { return e.counters.authCmds.Load() == 2 && e.counters.authErrors.Load() == 1 }},
		{name: "-Y termination", flags: []string{"-Y", authFile}, set: func(e *Env) { e.ASCIIAuth = auth },
			steps: []string{"set a 0 0 3\r\nabcde", "version\r\n", "set a 0 0 x\r\n"},
			want:  lines("CLIENT_ERROR bad command line termination", "CLIENT_ERROR unauthenticated", "CLIENT_ERROR unauthenticated")},
		{name: "-Y password with space", flags: []string{"-Y", authFile}, set: func(e *Env) { e.ASCIIAuth = auth },
			// "set auth x 0 0 12" is six tokens: the fifth, 0, is the length.
			steps: []string{"set a 0 0 12\r\nother secret\r\n", "set auth x 0 0 12\r\n", "ot", "her\r\n"},
			// memcached 1.6.43 on closes at the 5-byte line "her\r\n".
			want: lines("CLIENT_ERROR authentication failure", "CLIENT_ERROR bad command line termination"), since: "1.6.43"},
		{name: "-D", flags: []string{"-D", "#"}, set: func(e *Env) { e.Settings.DetailDelimiter = '#' },
			in: "set a#1 0 0 1\r\nx\r\nset a:2 0 0 1\r\nx\r\nget a#1 b#2\r\nstats detail dump\r\nstats settings\r\n",
			want: lines("STORED", "STORED", "VALUE a#1 0 1", "x", "END", "PREFIX a get 1 hit 1 set 1 del 0", "PREFIX b get 1 hit 0 set 0 del 0", "END",
				"STAT stat_key_prefix #", "STAT detail_enabled yes", "END"),
			keep: regexp.MustCompile(`^(STAT (stat_key_prefix|detail_enabled) .*|END|STORED|VALUE .*|x|PREFIX .*)$`)},
		{name: "-f -n", flags: []string{"-f", "2", "-n", "100"}, set: func(e *Env) { e.Settings.GrowthFactor, e.Settings.ChunkSize = 2, 100 },
			in:   "stats settings\r\n",
			want: lines("STAT growth_factor 2.00", "STAT chunk_size 100", "END"),
			keep: statsSettingLine("growth_factor", "chunk_size")},
	}
}

// keepLines filters a reply to the lines re matches, and sorts each run of
// PREFIX lines (memcached lists prefixes in the order of its hash table).
func keepLines(reply string, re *regexp.Regexp) string {
	var out []string
	for _, l := range strings.SplitAfter(reply, "\r\n") {
		if l != "" && (re == nil || re.MatchString(strings.TrimSuffix(l, "\r\n"))) {
			out = append(out, l)
		}
	}
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], "PREFIX ") {
			j++
		}
		slices.Sort(out[i:j])
		i = j + 1
	}
	return strings.Join(out, "")
}

func TestGatingFlags(t *testing.T) {
	for _, fc := range flagCases(t) {
		if fc.steps != nil {
			fc.in = strings.Join(fc.steps, "")
		}
		t.Run(fc.name, func(t *testing.T) {
			env := newSmallEnv(t)
			fc.set(env)
			got := drive(t, NewSession(env), []byte(fc.in))
			if g := keepLines(got.out, fc.keep); g != fc.want {
				t.Errorf("got  %q\nwant %q", g, fc.want)
			}
			if fc.check != nil && !fc.check(env) {
				t.Errorf("state check failed")
			}
			// Split at every byte: the same replies.
			for i := 1; i < len(fc.in); i += 1 + len(fc.in)/64 {
				got := driveFresh(t, func(tb testing.TB) *Env {
					env := newTinyEnv(tb)
					fc.set(env)
					return env
				}, []byte(fc.in[:i]), []byte(fc.in[i:]))
				if g := keepLines(got.out, fc.keep); !got.culled && g != fc.want {
					t.Fatalf("split at %d: got %q\nwant %q", i, g, fc.want)
				}
			}
		})
	}
}

func TestGatingFlagsAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	for _, fc := range flagCases(t) {
		if fc.since != "" {
			continue
		}
		t.Run(fc.name, func(t *testing.T) {
			addr := startMemcachedWith(t, nil, fc.flags...)
			var got result
			if fc.steps != nil {
				got = exchangeSteps(t, addr, fc.steps)
			} else {
				got = exchangeAll(t, addr, fc.in)
			}
			if g := keepLines(got.out, fc.keep); g != fc.want {
				t.Errorf("memcached %v:\n got  %q\nwant %q", fc.flags, g, fc.want)
			}
		})
	}
}

func TestShutdownCallsEnv(t *testing.T) {
	for _, tc := range []struct {
		in       string
		graceful bool
	}{{"shutdown\r\nversion\r\n", false}, {"shutdown graceful\r\nversion\r\n", true}} {
		env := newTinyEnv(t)
		env.Settings.ShutdownEnabled = true
		calls, graceful := 0, false
		env.Shutdown = func(g bool) { calls++; graceful = g }
		got := drive(t, NewSession(env), []byte(tc.in))
		if got.out != "" || !got.closed || calls != 1 || graceful != tc.graceful {
			t.Fatalf("%q: out %q closed %v calls %d graceful %v", tc.in, got.out, got.closed, calls, graceful)
		}
	}
	// Enabled but nothing wired: still closes, as the server would.
	env := newTinyEnv(t)
	env.Settings.ShutdownEnabled = true
	if got := drive(t, NewSession(env), []byte("shutdown\r\n")); !got.closed {
		t.Fatal("shutdown without a callback did not close")
	}
}

func TestShutdownAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcachedWith(t, nil, "-A")
	got := exchangeWant(t, addr, "shutdown graceful\r\nversion\r\n", 0, true)
	if got.out != "" || !got.closed {
		t.Fatalf("memcached -A: shutdown graceful gave %q, closed %v", got.out, got.closed)
	}
}

func TestParseASCIIAuth(t *testing.T) {
	a, err := parseASCIIAuth([]byte("u:p\r\nv:with space\nw:\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		u, p string
		ok   bool
	}{{"u", "p", true}, {"v", "with space", true}, {"w", "", true}, {"u", "p\r", false}, {"x", "p", false}, {"", "", false}} {
		if got := a.Check([]byte(tc.u), []byte(tc.p)); got != tc.ok {
			t.Errorf("Check(%q, %q) = %v", tc.u, tc.p, got)
		}
	}
	if _, err := parseASCIIAuth([]byte("u:p\nnocolon\n")); err == nil {
		t.Error("a line without ':' was accepted")
	}
	if _, err := LoadASCIIAuth(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}

// exchangeSteps sends each step on one connection, reading the replies to
// one before sending the next: a step's first reply byte is waited for up to
// stepFirstByte (a step may answer nothing), the rest until stepQuiet passes
// without any. A loaded machine was seen to part one step's replies by more
// than 50 ms.
func exchangeSteps(t *testing.T, addr string, steps []string) result {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for _, st := range steps {
		if _, err := c.Write([]byte(st)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(stepFirstByte))
		for {
			n, err := c.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				break
			}
			c.SetReadDeadline(time.Now().Add(stepQuiet))
		}
	}
	return result{out: string(out)}
}

// TestSizeClassFlags: with -f and -n the classes `stats slabs` reports are
// memcached's (checked against memcached -f 2 -n 100 when it is installed).
func TestSizeClassFlags(t *testing.T) {
	st, err := store.New(store.Config{MemoryLimit: 4 << 20, GrowthFactor: 2, MinChunk: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	env := newSmallEnv(t)
	env.Store = st
	env.Settings.GrowthFactor, env.Settings.ChunkSize = 2, 100
	in := "set a 0 0 1\r\nx\r\nset b 0 0 200\r\n" + strings.Repeat("y", 200) + "\r\nstats slabs\r\n"
	keep := regexp.MustCompile(`^(STAT \d+:chunk_size .*|STORED)$`)
	want := lines("STORED", "STORED", "STAT 1:chunk_size 152", "STAT 2:chunk_size 304")
	if got := keepLines(drive(t, NewSession(env), []byte(in)).out, keep); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if testing.Short() {
		return
	}
	addr := startMemcachedWith(t, nil, "-f", "2", "-n", "100")
	if got := keepLines(exchangeAll(t, addr, in).out, keep); got != want {
		t.Fatalf("memcached: got %q, want %q", got, want)
	}
}

// TestASCIIAuthSizeBound: memcached holds a login's data block (after its
// line) in its 16 KiB read buffer and closes a connection whose data
// cannot fit, so a client that has not logged in cannot make it hold more;
// gocached draws the line at the same byte, against memcached too.
func TestASCIIAuthSizeBound(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth")
	if err := os.WriteFile(authFile, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auth, err := LoadASCIIAuth(authFile)
	if err != nil {
		t.Fatal(err)
	}
	login := func(size int) string {
		return "set a 0 0 " + strconv.Itoa(size) + "\r\nuser " + strings.Repeat("p", size-5) + "\r\n"
	}
	cases := []struct {
		size   int
		want   string
		closed bool
	}{
		{16382, "CLIENT_ERROR authentication failure\r\n", false}, // with its \r\n, 16384
		{16383, "", true},
		// Over the limit, memcached 1.6.42 on refuses the line, then
		// closes at the data, a line longer than its read buffer.
		{1 << 20, "CLIENT_ERROR auth token too long\r\n", true},
	}
	for _, c := range cases {
		env := newSmallEnv(t)
		env.ASCIIAuth = auth
		if got := drive(t, NewSession(env), []byte(login(c.size))); got.out != c.want || got.closed != c.closed {
			t.Errorf("%d bytes: got %q closed %v, want %q closed %v", c.size, got.out, got.closed, c.want, c.closed)
		}
	}
	if testing.Short() {
		return
	}
	dir2, err := os.MkdirTemp("", "gocached-auth-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir2)
	os.Chmod(dir2, 0o755)
	mcAuth := filepath.Join(dir2, "auth")
	if err := os.WriteFile(mcAuth, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startMemcachedWith(t, nil, "-Y", mcAuth)
	for _, c := range cases[:2] { // the last is 1.6.42's
		if got := exchangeWant(t, addr, login(c.size), len(c.want), c.closed); got.out != c.want || got.closed != c.closed {
			t.Errorf("memcached, %d bytes: got %q closed %v, want %q closed %v", c.size, got.out, got.closed, c.want, c.closed)
		}
	}
}

// TestASCIIAuthCoversBinary: with -Y every connection is read as memcached's
// text login, whatever its first byte, so binary requests cannot reach the
// cache without a login (memcached answers the bytes up to the first 0x0a,
// the noop's opcode here, as a text line); after the login the connection
// speaks text only. Checked against memcached too.
func TestASCIIAuthCoversBinary(t *testing.T) {
	authFile := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(authFile, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auth, err := LoadASCIIAuth(authFile)
	if err != nil {
		t.Fatal(err)
	}
	packets := binReq(opSet, "secretkey", setExt(0, 0), "written-by-binary", 1, 0) +
		binReq(opGetK, "secretkey", "", "", 2, 0) + binReq(opNoop, "", "", "", 3, 0)
	cases := []struct{ name, in, want string }{
		{"binary before a login", packets, lines("CLIENT_ERROR unauthenticated")},
		// The noop splits at its 0x0a: a 2-byte line, too short for
		// memcached 1.6.40's parser, then the rest.
		{"binary after a login", "set a 0 0 9\r\nuser pass\r\n" + binReq(opNoop, "", "", "", 3, 0) + "\r\nversion\r\n",
			lines("STORED", "CLIENT_ERROR bad command line format", "ERROR", "VERSION 1.6.18")},
	}
	for _, c := range cases {
		env := newSmallEnv(t)
		env.ASCIIAuth = auth
		if got := drive(t, NewSession(env), []byte(c.in)); got.out != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got.out, c.want)
		}
		if env.Store.Get([]byte("secretkey"), func([]byte, store.Meta) {}) {
			t.Errorf("%s: a binary set stored without a login", c.name)
		}
	}
	if testing.Short() {
		return
	}
	dir, err := os.MkdirTemp("", "gocached-auth-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	mcAuth := filepath.Join(dir, "auth")
	if err := os.WriteFile(mcAuth, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startMemcachedWith(t, nil, "-Y", mcAuth)
	for _, c := range cases[:1] { // the second is 1.6.40's
		if got := exchangeSteps(t, addr, []string{c.in}); got.out != c.want {
			t.Errorf("memcached, %s: got %q, want %q", c.name, got.out, c.want)
		}
	}
}

// The bounds of exchangeSteps' waits.
const (
	stepFirstByte = 2 * time.Second
	stepQuiet     = 300 * time.Millisecond
)
