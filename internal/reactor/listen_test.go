package reactor

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"
)

func TestParseListen(t *testing.T) {
	tests := []struct {
		listen  string
		port    int
		want    []string
		wantErr bool
	}{
		{"", 11211, []string{":11211"}, false},
		{"127.0.0.1", 11211, []string{"127.0.0.1:11211"}, false},
		{"127.0.0.1,10.0.0.1", 5, []string{"127.0.0.1:5", "10.0.0.1:5"}, false},
		{" 127.0.0.1 , ::1 ", 7, []string{"127.0.0.1:7", "[::1]:7"}, false},
		{"127.0.0.1:9000", 11211, []string{"127.0.0.1:9000"}, false},
		{"[::1]:9000,[fe80::1]", 1, []string{"[::1]:9000", "[fe80::1]:1"}, false},
		{"localhost", 0, []string{"localhost:0"}, false},
		{"0.0.0.0", 5, []string{"0.0.0.0:5"}, false},
		{"notls:127.0.0.1:99,10.0.0.1", 5, []string{"127.0.0.1:99", "10.0.0.1:5"}, false},
		// memcached's strtok_r(list, ";,"): semicolons separate too, and
		// empty entries are skipped.
		{"127.0.0.1;::1", 7, []string{"127.0.0.1:7", "[::1]:7"}, false},
		{"127.0.0.1,", 1, []string{"127.0.0.1:1"}, false},
		{",127.0.0.1,,[::1]:9;", 1, []string{"127.0.0.1:1", "[::1]:9"}, false},
		{",", 1, nil, true},
		{" ; , ", 1, nil, true},
		{"127.0.0.1:99999", 1, nil, true},
		{"127.0.0.1:abc", 1, nil, true},
		{"[::1", 1, nil, true},
		{"]", 1, nil, true},
		{"a b", 1, nil, true},
		{"a:b:c", 1, nil, true},
		{":80", 1, nil, true},
		{"", 70000, nil, true},
	}
	for _, tt := range tests {
		addrs, err := ParseListen(tt.listen, tt.port)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ParseListen(%q, %d) = %q, %v; want %q, err=%v", tt.listen, tt.port, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestParseListenTLSPrefixes: memcached's per-listener TLS prefixes, read
// as its server_sockets reads them (the name, then one byte skipped), and
// carried to the bindings.
func TestParseListenTLSPrefixes(t *testing.T) {
	for _, tt := range []struct {
		entry string
		want  ListenTLS
		addr  string
	}{
		{"127.0.0.1:99", ListenTLSDefault, "127.0.0.1:99"},
		{"notls:127.0.0.1:99", ListenNoTLS, "127.0.0.1:99"},
		{"btls:127.0.0.1", ListenBasicTLS, "127.0.0.1:5"},
		{"mtls:[::1]:9", ListenPeerTLS, "[::1]:9"},
		{"mtlsX127.0.0.1", ListenPeerTLS, "127.0.0.1:5"},
		{"mtls:proto[ascii]:tag[tools]:127.0.0.1:8", ListenPeerTLS, "127.0.0.1:8"},
	} {
		addrs, err := ParseListen(tt.entry+",[::1]:7", 5)
		if err != nil || len(addrs) != 2 || addrs[0].TLS != tt.want || addrs[0].String() != tt.addr || addrs[1].TLS != ListenTLSDefault {
			t.Errorf("ParseListen(%q) = %+v, %v; want %s with TLS mode %d", tt.entry, addrs, err, tt.addr, tt.want)
			continue
		}
		bs, err := Bindings(addrs, nil)
		if err != nil || bs[0].TLS != tt.want || bs[1].TLS != ListenTLSDefault {
			t.Errorf("Bindings(%q) = %+v, %v", tt.entry, bs, err)
		}
	}
}

// fakeLookup resolves a few names without touching the network.
func fakeLookup(host string) ([]net.IP, error) {
	switch host {
	case "cache.test":
		return []net.IP{net.ParseIP("fd00::9"), net.ParseIP("10.0.0.9")}, nil
	case "localhost":
		return []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestBindings(t *testing.T) {
	tests := []struct {
		listen string
		want   []string
	}{
		// memcached binds the wildcard as two sockets, IPv4 and IPv6-only.
		{"", []string{"0.0.0.0:5", "[::]:5"}},
		{"0.0.0.0", []string{"0.0.0.0:5"}},
		{"::", []string{"[::]:5"}},
		{"cache.test", []string{"[fd00::9]:5", "10.0.0.9:5"}},
		{"127.0.0.1,localhost:6", []string{"127.0.0.1:5", "127.0.0.1:6", "[::1]:6"}},
		{"127.0.0.1,127.0.0.1", []string{"127.0.0.1:5"}},
	}
	for _, tt := range tests {
		addrs, err := ParseListen(tt.listen, 5)
		if err != nil {
			t.Fatalf("ParseListen(%q): %v", tt.listen, err)
		}
		bs, err := Bindings(addrs, fakeLookup)
		if err != nil {
			t.Fatalf("Bindings(%q): %v", tt.listen, err)
		}
		var got []string
		for _, b := range bs {
			got = append(got, net.JoinHostPort(b.IP.String(), strconv.Itoa(b.Port)))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Bindings(%q) = %q, want %q", tt.listen, got, tt.want)
		}
	}
	_, err := Bindings([]ListenAddr{{Host: "unknown.test"}}, fakeLookup)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) {
		t.Errorf("Bindings(unknown.test) err = %v, want the resolver's error", err)
	}
}

// FuzzParseListen checks that every address accepted has a valid port and
// survives a JoinHostPort/SplitHostPort round trip.
func FuzzParseListen(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1", "127.0.0.1,::1", "127.0.0.1;,::1", "[::1]:80", "a:b:c", "[", "]", ",", "h:99999", " x , y "} {
		f.Add(s, 11211)
	}
	f.Fuzz(func(t *testing.T, listen string, port int) {
		addrs, err := ParseListen(listen, port)
		if err != nil {
			return
		}
		if len(addrs) == 0 {
			t.Fatalf("ParseListen(%q, %d) = no addresses and no error", listen, port)
		}
		for _, a := range addrs {
			host, p, err := net.SplitHostPort(a.String())
			if err != nil || host != a.Host {
				t.Fatalf("ParseListen(%q, %d) gave %+v: %q does not split back (%v)", listen, port, a, a.String(), err)
			}
			if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
				t.Fatalf("ParseListen(%q, %d) gave %q with a bad port", listen, port, a)
			}
		}
	})
}
