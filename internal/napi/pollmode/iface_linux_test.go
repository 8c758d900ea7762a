package pollmode

import "testing"

func TestNAPIInterface(t *testing.T) {
	tests := []struct {
		iface, listen string
		wantIface     string // "" = none to act on
		wantErr       bool
	}{
		{"lo", "", "lo", false},
		{"", "127.0.0.1", "lo", false},
		{"", "127.0.0.1:0", "lo", false},
		{"", "", "", false},
		{"", "0.0.0.0", "", false},
		{"", "[::]", "", false},
		{"gocached-none0", "", "", true},
		{"", "192.0.2.77", "", false}, // TEST-NET-1: no interface holds it
	}
	for _, tt := range tests {
		ifi, why, err := napiInterface(tt.iface, tt.listen)
		switch {
		case tt.wantErr:
			if err == nil {
				t.Errorf("napiInterface(%q, %q) = %v, want an error", tt.iface, tt.listen, ifi)
			}
		case err != nil:
			t.Errorf("napiInterface(%q, %q): %v", tt.iface, tt.listen, err)
		case tt.wantIface == "" && (ifi != nil || why == ""):
			t.Errorf("napiInterface(%q, %q) = %v, %q; want none with a reason", tt.iface, tt.listen, ifi, why)
		case tt.wantIface != "" && (ifi == nil || ifi.Name != tt.wantIface):
			t.Errorf("napiInterface(%q, %q) = %v, want %s", tt.iface, tt.listen, ifi, tt.wantIface)
		}
	}
}
