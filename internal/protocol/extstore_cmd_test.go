package protocol

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/store"
)

// extSettingLines picks the ext_* lines of `stats settings`, in order.
func extSettingLines(t *testing.T, s *Session) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.SplitAfter(drive(t, s, []byte("stats settings\r\n")).out, "\r\n") {
		if strings.HasPrefix(l, "STAT ext_") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// memcached 1.6.45's defaults, as it prints them without ext_path.
const extDefaultLines = "STAT ext_item_size 512\r\nSTAT ext_item_age 4294967295\r\nSTAT ext_low_ttl 0\r\n" +
	"STAT ext_recache_rate 2000\r\nSTAT ext_wbuf_size 4194304\r\nSTAT ext_compact_under 0\r\n" +
	"STAT ext_drop_under 0\r\nSTAT ext_max_sleep 1000000\r\nSTAT ext_max_frag 0.80\r\nSTAT ext_drop_unread no\r\n"

// The `extstore` command's replies and what it leaves in `stats settings`,
// as memcached 1.6.45 answered the same lines, with and without a flash
// tier (memcached keeps the values either way).
func TestExtstoreCommand(t *testing.T) {
	in := "extstore item_size 600\r\nextstore item_age 3\r\nextstore low_ttl 4\r\nextstore recache_rate 5\r\n" +
		"extstore compact_under 6\r\nextstore drop_under 7\r\nextstore max_frag 0.3\r\nextstore drop_unread 1\r\n" +
		"extstore max_sleep 10\r\nextstore bogus 1\r\nextstore item_size\r\nextstore item_size abc\r\nextstore\r\n" +
		"extstore drop_unread 0\r\nextstore drop_unread 5\r\nextstore item_size -1\r\nextstore item_size +5\r\n" +
		"extstore compact_under 999999999999\r\nextstore i 9\r\nextstore free_memchunks 63 1\r\n" +
		"extstore free_memchunks 64 1\r\nextstore free 1 1\r\nextstore item_size 7 noreply\r\n"
	replies := lines("OK", "OK", "OK", "OK", "OK", "OK", "OK", "OK", "OK", "ERROR", "ERROR", "ERROR", "ERROR",
		"OK", "OK", "ERROR", "ERROR", "ERROR", "OK", "OK", "ERROR", "OK")
	after := "STAT ext_item_size 7\r\nSTAT ext_item_age 3\r\nSTAT ext_low_ttl 4\r\nSTAT ext_recache_rate 5\r\n" +
		"STAT ext_wbuf_size %d\r\nSTAT ext_compact_under 6\r\nSTAT ext_drop_under 7\r\nSTAT ext_max_sleep 10\r\n" +
		"STAT ext_max_frag 0.30\r\nSTAT ext_drop_unread yes\r\n"
	for _, tc := range []struct {
		name   string
		env    func(t *testing.T) *Env
		before string
		wbuf   string
	}{
		{"no flash tier", func(t *testing.T) *Env { return newSmallEnv(t) }, extDefaultLines, "4194304"},
		{"flash tier", func(t *testing.T) *Env { return newFlashEnv(t).env },
			"STAT ext_item_size 512\r\nSTAT ext_item_age 0\r\nSTAT ext_low_ttl 0\r\n" +
				"STAT ext_recache_rate 0\r\nSTAT ext_wbuf_size 131072\r\nSTAT ext_compact_under 0\r\n" +
				"STAT ext_drop_under 0\r\nSTAT ext_max_sleep 1000000\r\nSTAT ext_max_frag 0.00\r\n" +
				"STAT ext_drop_unread no\r\n", "131072"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env(t)
			s := NewSession(env)
			if got := extSettingLines(t, s); got != tc.before {
				t.Fatalf("settings before:\n%q\nwant\n%q", got, tc.before)
			}
			if got := drive(t, s, []byte(in)).out; got != replies {
				t.Fatalf("replies %q, want %q", got, replies)
			}
			want := strings.Replace(after, "%d", tc.wbuf, 1)
			if got := extSettingLines(t, s); got != want {
				t.Fatalf("settings after:\n%q\nwant\n%q", got, want)
			}
			if k, ok := env.Store.FlashKnobs(); ok {
				wantK := store.FlashKnobs{ItemSize: 7, ItemAge: 3, LowTTL: 4, RecacheRate: 5, MaxSleep: 10}
				wantK.Policy.CompactUnder, wantK.Policy.DropUnder, wantK.Policy.MaxFrag = 6, 7, 0.3
				wantK.Policy.DropUnread = true
				if k != wantK {
					t.Fatalf("store knobs %+v, want %+v", k, wantK)
				}
			}
		})
	}
}

// A max_frag strtod refuses is an ERROR that still zeroes the setting, and
// C's spellings of NaN and infinity print as they do in memcached.
func TestExtstoreMaxFrag(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	for _, c := range []struct{ in, reply, frag string }{
		{"0.5", "OK", "0.50"}, {"x", "ERROR", "0.00"}, {"-0.5", "OK", "-0.50"}, {"1e400", "ERROR", "0.00"},
		{"0.5x", "ERROR", "0.00"}, {"nan", "OK", "nan"}, {"inf", "OK", "inf"},
	} {
		if got := drive(t, s, []byte("extstore max_frag "+c.in+"\r\n")).out; got != c.reply+"\r\n" {
			t.Fatalf("max_frag %s: %q, want %s", c.in, got, c.reply)
		}
		if got := extSettingLines(t, s); !strings.Contains(got, "STAT ext_max_frag "+c.frag+"\r\n") {
			t.Fatalf("max_frag %s: settings %q, want %s", c.in, got, c.frag)
		}
	}
}

// `stats extstore` lists four lines per page, in page order; without a
// flash tier it is a bare END.
func TestStatsExtstorePages(t *testing.T) {
	if got := drive(t, NewSession(newSmallEnv(t)), []byte("stats extstore\r\n")).out; got != "END\r\n" {
		t.Fatalf("without a flash tier: %q", got)
	}
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "a")
	got := drive(t, NewSession(fe.env), []byte("stats extstore\r\n")).out
	pages := fe.env.Store.Flash().Engine.PageCount()
	var re strings.Builder
	for i := range pages {
		n := strconv.Itoa(i)
		re.WriteString("STAT " + n + ":version \\d+\r\nSTAT " + n + ":bytes \\d+\r\nSTAT " + n +
			":bucket \\d+\r\nSTAT " + n + ":free_bucket \\d+\r\n")
	}
	re.WriteString("END\r\n")
	if !regexp.MustCompile("^" + re.String() + "$").MatchString(got) {
		t.Fatalf("stats extstore of %d pages: %q", pages, got)
	}
	if !strings.HasPrefix(got, "STAT 0:version ") || strings.HasPrefix(got, "STAT 0:version 0\r\n") {
		t.Fatalf("page 0 holds the written items, its version is not 0: %q", abbrev(got))
	}
}

// A get whose line ends in a bad key answers only the error; the flash
// keys before it count as reads started and aborted, as memcached's, and
// no read waits on the disk.
func TestFlashGetBadKeyAborts(t *testing.T) {
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "b", "c")
	s := NewSession(fe.env)
	got := fe.flashRun(t, s, []byte("get b c "+strings.Repeat("f", 300)+"\r\n"), nil)
	if got != "CLIENT_ERROR bad command line format\r\n\r\n" { // memcached 1.6.45 sends the bare CRLF too
		t.Fatalf("reply %q", abbrev(got))
	}
	if fs := fe.env.Store.FlashStats(); fs.GetExtstore != 2 || fs.GetAbortedExtstore != 2 {
		t.Fatalf("flash stats %+v, want 2 reads started and aborted", fs)
	}
	if n := fe.gate.Queued(); n != 0 {
		t.Fatalf("%d reads went to the disk", n)
	}
}

// `watch sysevents` receives the flash compactor's lines: while watched it
// looks for a page every ext_max_sleep and logs compact_fraginfo.
func TestWatchSysevents(t *testing.T) {
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "a")
	fe.env.Store.SetFlashKnobs(func(k *store.FlashKnobs) { k.MaxSleep = 1000 })
	w := NewSession(fe.env)
	woke := make(chan struct{}, 1)
	w.SetWakeup(func() {
		select {
		case woke <- struct{}{}:
		default:
		}
	})
	w.Opened(30)
	got := drive(t, w, []byte("watch sysevents\r\n")).out
	if !strings.HasPrefix(got, "OK\r\n") {
		t.Fatalf("watch: %q", got)
	}
	// The compactor may log its first line before the OK is collected,
	// into the same output; otherwise the line's wakeup comes later.
	out := []byte(strings.TrimPrefix(got, "OK\r\n"))
	if len(out) == 0 {
		select {
		case <-woke:
		case <-time.After(time.Minute):
			t.Fatal("no sysevents line")
		}
		_, out, _ = w.Process(nil, nil)
	}
	if !regexp.MustCompile(`^ts=\d+\.\d+ gid=\d+ type=compact_fraginfo ratio=0\.00 bytes=0\n`).Match(out) {
		t.Fatalf("sysevents: %q", out)
	}
	w.Reset()
}
