//go:build !unix

package reactor

import "net"

// dupUDP is another descriptor of c's socket, sharing its receive queue.
func dupUDP(c *net.UDPConn) (*net.UDPConn, error) {
	f, err := c.File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
