package protocol

import (
	"regexp"
	"strings"
	"testing"
)

var deletedLine = regexp.MustCompile(`^ts=\d+\.\d+ gid=\d+ (type=deleted .*)$`)

// TestWatchDeletions follows t/watcher.t of memcached 1.6.45: a delete and
// an md that remove an item are logged with its value size; misses, md I
// and binary deletes are not; md x logs the emptied item.
func TestWatchDeletions(t *testing.T) {
	env := newWatchEnv(t)
	w := NewSession(env)
	w.SetWakeup(func() {})
	if got := drive(t, w, []byte("watch deletions\r\n")); got.out != "OK\r\n" {
		t.Fatalf("watch deletions: %q", got.out)
	}
	c := NewSession(env)
	got := drive(t, c, []byte("set vfoo 0 0 4\r\nvbar\r\nmd nope\r\ndelete vfoo\r\nset vfoo 0 0 4\r\nvbar\r\nmd vfoo\r\n"+
		"set vfoo 0 0 4\r\nvbar\r\nmd vfoo I\r\nmg vfoo\r\ndelete vfoo\r\nset big 0 0 300\r\n"+strings.Repeat("b", 300)+"\r\nmd big x\r\n"+
		binReq(opSet, "bin", setExt(0, 0), "12", 1, 0)+binReq(opDelete, "bin", "", "", 2, 0)))
	if !strings.HasPrefix(got.out, "STORED\r\nNF\r\nDELETED\r\nSTORED\r\nHD\r\nSTORED\r\nHD\r\nHD X W\r\nDELETED\r\nSTORED\r\nHD\r\n") {
		t.Fatalf("client: %q", got.out)
	}
	_, out, _ := w.Process(nil, nil)
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		m := deletedLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("bad deletions line %q in %q", l, out)
		}
		lines = append(lines, m[1])
	}
	want := []string{
		"type=deleted key=vfoo cmd=delete clsid=1 size=4",
		"type=deleted key=vfoo cmd=md clsid=1 size=4",
		"type=deleted key=vfoo cmd=delete clsid=1 size=4",
		"type=deleted key=big cmd=md clsid=1 size=0",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("deletions:\n%s", strings.Join(lines, "\n"))
	}
	w.Reset()
}

// TestMgdump: `lru_crawler mgdump` (memcached 1.6.19 on) lists every key as
// an mg command, a base64 key with b, between OK and EN.
func TestMgdump(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	drive(t, s, []byte("set a 0 0 1\r\nx\r\nms AAEC 1 b\r\ny\r\n"))
	got := drive(t, s, []byte("lru_crawler mgdump all\r\n")).out
	body, ok := strings.CutPrefix(got, "OK\r\n")
	if !ok || !strings.HasSuffix(body, "EN\r\n") {
		t.Fatalf("mgdump: %q", got)
	}
	keys := strings.Split(strings.TrimSuffix(body, "EN\r\n"), "\r\n")
	if len(keys) != 3 || keys[2] != "" || !(keys[0] == "mg a" && keys[1] == "mg AAEC b" || keys[1] == "mg a" && keys[0] == "mg AAEC b") {
		t.Fatalf("mgdump lines: %q", body)
	}
}

// TestStatsDetailUnderX: -X refuses stats detail in both protocols
// (memcached 1.6.37 text, 1.6.45 binary).
func TestStatsDetailUnderX(t *testing.T) {
	env := newSmallEnv(t)
	env.Settings.DumpDisabled = true
	if got := drive(t, NewSession(env), []byte("stats detail on\r\n")).out; got != "CLIENT_ERROR stats detail not allowed\r\n" {
		t.Fatalf("text: %q", got)
	}
	got := drive(t, NewSession(env), []byte(binReq(opStat, "detail on", "", "", 1, 0)))
	if d := describePackets(got.out, got.closed); d != "81 00 op=10 st=01 ext= key=\"\" val=\"Not found\" opq=00000001 cas=0\n" {
		t.Fatalf("binary: %s", d)
	}
}
