package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// pingTimeout bounds `gocached ping` as a container health check.
const pingTimeout = 3 * time.Second

// ping is `gocached ping [ADDR]`: it asks the server at ADDR (default
// 127.0.0.1:11211; a path is a unix socket) for its version and exits 0 when
// it answers, 1 otherwise — the image's HEALTHCHECK, which has no shell or
// nc to do it with.
func ping(args []string, stdout, stderr io.Writer) int {
	addr := "127.0.0.1:11211"
	switch len(args) {
	case 0:
	case 1:
		addr = args[0]
	default:
		fmt.Fprintln(stderr, "usage: gocached ping [HOST:PORT|/path/to/socket]")
		return 2
	}
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	c, err := net.DialTimeout(network, addr, pingTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "gocached ping: %v\n", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(pingTimeout))
	if _, err := io.WriteString(c, "version\r\n"); err != nil {
		fmt.Fprintf(stderr, "gocached ping: %v\n", err)
		return 1
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "VERSION ") {
		fmt.Fprintf(stderr, "gocached ping: %s answered %q, %v\n", addr, line, err)
		return 1
	}
	fmt.Fprint(stdout, strings.TrimSuffix(line, "\r\n")+"\n")
	return 0
}
