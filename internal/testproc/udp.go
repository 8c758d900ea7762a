package testproc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
)

// FreeUDPPort asks the kernel for a loopback UDP port nobody holds right
// now, for a server's -U. As with FreePort, someone may take it before the
// server binds it.
func FreeUDPPort() (int, error) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free UDP port: %w", err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port, nil
}

// UDPBound reports whether a UDP socket of this network namespace is bound
// to port (Linux: /proc/net/udp and udp6). A server's readiness probe
// dials TCP, and servers bind their UDP sockets after listening on TCP: a
// datagram sent before the bind is refused, one sent after is queued.
func UDPBound(port int) (bool, error) {
	pat := []byte(fmt.Sprintf(":%04X", port))
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			if table == "/proc/net/udp6" && errors.Is(err, fs.ErrNotExist) {
				continue // no IPv6 in this kernel
			}
			return false, err
		}
		// sl local_address rem_address ...: the port ends the local address.
		for _, line := range bytes.Split(b, []byte("\n"))[1:] {
			f := bytes.Fields(line)
			if len(f) > 2 && bytes.HasSuffix(f[1], pat) {
				return true, nil
			}
		}
	}
	return false, nil
}
