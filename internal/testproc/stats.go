package testproc

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"
)

// statsTimeout bounds one stats exchange: generous, for a loaded machine.
const statsTimeout = 30 * time.Second

// Stats sends `stats GROUP` ("" for plain stats) on c and returns the
// reply's values by name. It is the one stats reader of the test suites:
// every test that checks a counter reads it here.
func Stats(c net.Conn, group string) (map[string]string, error) {
	cmd := "stats\r\n"
	if group != "" {
		cmd = "stats " + group + "\r\n"
	}
	if err := c.SetDeadline(time.Now().Add(statsTimeout)); err != nil {
		return nil, err
	}
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(cmd)); err != nil {
		return nil, fmt.Errorf("stats %s: %w", group, err)
	}
	_, vals, err := ReadStats(bufio.NewReader(c))
	if err != nil {
		return nil, fmt.Errorf("stats %s: %w", group, err)
	}
	return vals, nil
}

// ReadStats reads a stats reply up to its END from r: the names in the
// server's order and the values by name. A line other than STAT or END
// (an ERROR, a CLIENT_ERROR) is an error carrying that line.
func ReadStats(r *bufio.Reader) (names []string, vals map[string]string, err error) {
	vals = map[string]string{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return names, vals, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return names, vals, nil
		}
		n, v, ok := parseStatLine(line)
		if !ok {
			return names, vals, fmt.Errorf("not a stats line: %q", line)
		}
		names = append(names, n)
		vals[n] = v
	}
}

// ParseStats splits a whole stats reply (up to and without its END) into
// names in order and values by name; lines that are not STAT lines are
// skipped.
func ParseStats(reply string) (names []string, vals map[string]string) {
	vals = map[string]string{}
	for _, line := range strings.Split(reply, "\n") {
		if n, v, ok := parseStatLine(strings.TrimRight(line, "\r")); ok {
			names = append(names, n)
			vals[n] = v
		}
	}
	return names, vals
}

// parseStatLine reads "STAT name value"; the value may hold spaces (stats
// settings' some values, stats conns' addresses do not, but keep them whole).
func parseStatLine(line string) (name, value string, ok bool) {
	rest, ok := strings.CutPrefix(line, "STAT ")
	if !ok {
		return "", "", false
	}
	name, value, _ = strings.Cut(rest, " ")
	return name, value, name != ""
}
