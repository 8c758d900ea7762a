package testproc

import (
	"net"
	"testing"
)

// TestUDPBound: a bound UDP socket's port is found, a free one is not.
func TestUDPBound(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	if ok, err := UDPBound(port); err != nil || !ok {
		t.Fatalf("UDPBound(%d) with a socket bound: %v, %v", port, ok, err)
	}
	pc.Close()
	if ok, err := UDPBound(port); err != nil || ok {
		t.Fatalf("UDPBound(%d) after the close: %v, %v", port, ok, err)
	}
}
