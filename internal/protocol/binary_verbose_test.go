package protocol

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
)

// verboseBinaryTraffic is binary requests whose -vv lines memcached and
// gocached print alike.
func verboseBinaryTraffic() string {
	var flags [8]byte
	binary.BigEndian.PutUint32(flags[0:4], 5)
	var arith [20]byte
	binary.BigEndian.PutUint64(arith[0:8], 1)
	binary.BigEndian.PutUint64(arith[8:16], 10)
	var touch [4]byte
	binary.BigEndian.PutUint32(touch[:], 10)
	return binReq(opSet, "k", string(flags[:]), "hello", 1, 0) +
		binReq(opGet, "k", "", "", 2, 0) +
		binReq(opGet, "nope", "", "", 3, 0) +
		binReq(opGetK, "k", "", "", 4, 0) +
		binReq(opGetK, "nope", "", "", 5, 0) +
		binReq(opIncrement, "n", string(arith[:]), "", 6, 0) +
		binReq(opAppend, "n", "", "1", 7, 0) +
		binReq(opDelete, "k", "", "", 8, 0) +
		binReq(opTouch, "n", string(touch[:]), "", 9, 0) +
		binReq(opNoop, "", "", "", 10, 0) +
		binReq(opVersion, "", "", "", 11, 0) +
		binReq(opQuit, "", "", "", 12, 0)
}

// binaryVerboseSection is the -vv lines of connection id in log, from its
// protocol line to its close, numbered 17, with the CAS bytes of response
// dumps masked (the two servers hand out different CAS values). Lines of
// other connections are left out: a server's log may interleave another
// client's (the test harness's readiness probe closing late, say).
func binaryVerboseSection(t *testing.T, log, id string) string {
	t.Helper()
	start := strings.Index(log, id+": Client using the binary protocol\n")
	end := -1
	if start >= 0 {
		end = strings.Index(log[start:], "<"+id+" connection closed.\n")
	}
	if start < 0 || end < 0 {
		t.Fatalf("connection %s is not in the log:\n%s", id, log)
	}
	var lines []string
	for _, l := range strings.Split(log[start:start+end], "\n") {
		if other := otherConnLine.FindStringSubmatch(l); other != nil && other[1]+other[2] != id {
			continue
		}
		lines = append(lines, l)
	}
	for i, l := range lines {
		if l == ">"+id+" Writing bin response:" && i+6 < len(lines) {
			lines[i+5], lines[i+6] = ">17 CAS", ">17 CAS"
		}
		for _, dir := range []string{"<", ">"} {
			if rest, ok := strings.CutPrefix(l, dir+id+" "); ok {
				l = dir + "17 " + rest
			}
		}
		if rest, ok := strings.CutPrefix(l, id+": "); ok {
			l = "17: " + rest
		}
		if lines[i] != ">17 CAS" {
			lines[i] = l
		}
	}
	return strings.Join(lines, "\n")
}

// otherConnLine matches a -vv line that names a connection ("<24 ...",
// ">24 ...", "24: ..."); its number is in group 1 or 2.
var otherConnLine = regexp.MustCompile(`^(?:[<>](\d+) |(\d+): )`)

func TestVerboseBinaryAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	mc := startMemcachedProc(t, nil, "-vv")
	probeClosed(t, mc)
	exchangeWant(t, mc.Addr(), verboseBinaryTraffic(), 0, true) // it ends in a quit
	// The binary client's connection, from its protocol line to its close.
	clientID := func(text string) string {
		i := strings.Index(text, ": Client using the binary protocol\n")
		if i < 0 {
			return ""
		}
		return text[strings.LastIndex(text[:i], "\n")+1 : i]
	}
	text := waitLogged(t, mc, "the binary client's connection and its close", func(text string) bool {
		id := clientID(text)
		return id != "" && strings.Contains(text[strings.Index(text, id+": Client using"):], "\n<"+id+" connection closed.\n")
	})
	id := clientID(text)
	want := binaryVerboseSection(t, text, id)

	env := newSmallEnv(t)
	s, glog := verboseSession(env)
	drive(t, s, []byte(verboseBinaryTraffic()))
	s.Reset()
	if got := binaryVerboseSection(t, glog.String(), "17"); got != want {
		t.Fatalf("gocached -vv:\n%s\nmemcached -vv:\n%s", got, want)
	}
}

// Under -S memcached says, for every binary request, whether the connection
// may run it: "authenticated() in cmd 0x0b is true" (version always may).
func TestVerboseBinaryAuthenticated(t *testing.T) {
	env := newSASLEnv(t)
	s, log := verboseSession(env)
	drive(t, s, []byte(binReq(opVersion, "", "", "", 1, 0)+binReq(opGet, "k", "", "", 2, 0)))
	got := log.String()
	for _, want := range []string{"authenticated() in cmd 0x0b is true\n", "authenticated() in cmd 0x00 is false\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("-vv under -S: no %q in\n%s", want, got)
		}
	}
}

// A get hit's response header is dumped with CAS 0, as memcached dumps it
// before it fills the CAS in; the reply itself carries the CAS. A Session
// reused after a close mid-request dumps the next connection's first
// request.
func TestVerboseBinaryGetHitAndReuse(t *testing.T) {
	env := newSmallEnv(t)
	s, log := verboseSession(env)
	out := drive(t, s, []byte(binReq(opSet, "k", string(make([]byte, 8)), "v", 1, 0)+binReq(opGet, "k", "", "", 2, 0))).out
	if cas := binary.BigEndian.Uint64([]byte(out[len(out)-29 : len(out)-21])); cas == 0 {
		t.Fatalf("the get's reply carries no CAS: %q", out)
	}
	dumps := strings.Split(log.String(), ">17 Writing bin response:\n")
	if len(dumps) != 3 || !strings.Contains(dumps[2], ">17   0x00 0x00 0x00 0x00\n>17   0x00 0x00 0x00 0x00\n") {
		t.Fatalf("get hit's dump:\n%s", log.String())
	}
	set := binReq(opSet, "k2", string(make([]byte, 8)), "value", 3, 0)
	drive(t, s, []byte(set[:len(set)-2])) // the client goes before its value is in
	s.Reset()
	s.Opened(18)
	drive(t, s, []byte(binReq(opNoop, "", "", "", 4, 0)))
	if !strings.Contains(log.String(), "<18 Read binary protocol data:\n") {
		t.Fatalf("the next connection's request was not dumped:\n%s", log.String())
	}
}
