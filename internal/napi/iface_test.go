package napi

import (
	"errors"
	"net"
	"testing"
)

func TestInterfaceByAddr(t *testing.T) {
	lo, err := InterfaceByAddr("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if lo.Flags&net.FlagLoopback == 0 {
		t.Fatalf("127.0.0.1 resolved to %s, not a loopback device", lo.Name)
	}
	for _, host := range []string{"", "0.0.0.0", "::", "192.0.2.77", "::ffff:0.0.0.0"} {
		if _, err := InterfaceByAddr(host); !errors.Is(err, ErrNoInterface) {
			t.Errorf("InterfaceByAddr(%q) = %v, want ErrNoInterface", host, err)
		}
	}
	if _, err := InterfaceByAddr("localhost"); err == nil || errors.Is(err, ErrNoInterface) {
		t.Errorf("a host name should be rejected as not an IP: %v", err)
	}
}
