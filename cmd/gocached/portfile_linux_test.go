//go:build linux

package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPortFile: with MEMCACHED_PORT_FILENAME set, the server writes its
// bound ports as memcached does ("TCP INET: N", "UDP INET: N"); -p -1 and
// -U -1 pick free ports, and the TCP one written is the one that answers.
func TestPortFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ports")
	cmd := exec.Command(binary, "-l", "127.0.0.1", "-p", "-1", "-U", "-1", "-v")
	cmd.Env = append(os.Environ(), portFileEnv+"="+file)
	s := startProcess(t, cmd)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("port file: %v; log:\n%s", err, s.stderr)
	}
	if _, err := os.Stat(file + ".lck"); !os.IsNotExist(err) {
		t.Errorf("temporary %s.lck left behind: %v", file, err)
	}
	re := regexp.MustCompile(`^(TCP|UDP) INET: ([1-9][0-9]*)$`)
	ports := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("port file line %q in %q", l, b)
		}
		ports[m[1]] = m[2]
	}
	if ports["TCP"] == "" || ports["UDP"] == "" || ports["TCP"] == "11211" {
		t.Fatalf("port file %q: want a free TCP and UDP port each", b)
	}
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+ports["TCP"], 5*time.Second)
	if err != nil {
		t.Fatalf("the TCP port written does not answer: %v", err)
	}
	nc.Close()
	if "127.0.0.1:"+ports["TCP"] != s.addr {
		t.Errorf("port file names %s, the server serves %s", ports["TCP"], s.addr)
	}
}

// TestUDPPortAloneSetsTCPPort: as in memcached, -U N without -p serves TCP
// on port N too.
func TestUDPPortAloneSetsTCPPort(t *testing.T) {
	port, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-U", itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	if o.reactor.Port != port || o.udpPort != port {
		t.Errorf("-U %d alone: TCP port %d, UDP port %d; want both %d", port, o.reactor.Port, o.udpPort, port)
	}
	if o, err := parseFlags([]string{"-U", itoa(port), "-p", "11300"}); err != nil || o.reactor.Port != 11300 {
		t.Errorf("-U with -p: TCP port %v (%v), want 11300", o, err)
	}
}
