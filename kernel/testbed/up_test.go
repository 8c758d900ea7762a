//go:build linux

package testbed

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/probe"
)

func TestPrereqsMissing(t *testing.T) {
	all := uint64(1)<<probe.CapNetAdmin | 1<<probe.CapSysAdmin
	found := func(string) (string, error) { return "/usr/sbin/x", nil }
	noEthtool := func(name string) (string, error) {
		if name == "ethtool" {
			return "", errors.New("not found")
		}
		return "/usr/sbin/" + name, nil
	}
	tests := []struct {
		name string
		p    prereqs
		want []string // substrings of the error; none = available
	}{
		{"root with tools", prereqs{euid: 0, caps: all, lookPath: found}, nil},
		{"not root", prereqs{euid: 1000, lookPath: found}, []string{"not root (euid 1000)"}},
		{"root without net admin", prereqs{euid: 0, caps: 1 << probe.CapSysAdmin, lookPath: found}, []string{"root without CAP_NET_ADMIN"}},
		{"root without sys admin", prereqs{euid: 0, caps: 1 << probe.CapNetAdmin, lookPath: found}, []string{"root without CAP_SYS_ADMIN"}},
		{"caps unreadable", prereqs{euid: 0, capsErr: errors.New("boom"), lookPath: found}, []string{"cannot read capabilities: boom"}},
		{"no ethtool", prereqs{euid: 0, caps: all, lookPath: noEthtool}, []string{"ethtool not found"}},
		{"nothing", prereqs{euid: 65534, lookPath: func(string) (string, error) { return "", errors.New("no") }},
			[]string{"not root", "ip not found", "ethtool not found"}},
	}
	for _, tt := range tests {
		err := tt.p.availability()
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v, want available", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: available, want %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tt.name, err, w)
			}
		}
	}
}

func TestDecide(t *testing.T) {
	unavailable := prereqs{euid: 1000, lookPath: func(string) (string, error) { return "/bin/x", nil }}.availability()
	tests := []struct {
		name     string
		avail    error
		require  string
		wantFail bool
		want     []string // substrings of the reason; nil = proceed
	}{
		{"available", nil, "", false, nil},
		{"available, required", nil, "1", false, nil},
		{"not root skips", unavailable, "", false, []string{"skipping", "not root", RequireEnv + "=1"}},
		{"not root, required fails", unavailable, "1", true, []string{"not root", RequireEnv + "=1 requires it"}},
		{"other values do not require", unavailable, "yes", false, []string{"skipping"}},
	}
	for _, tt := range tests {
		d := decide(tt.avail, tt.require)
		if tt.want == nil {
			if d.reason != "" {
				t.Errorf("%s: %+v, want proceed", tt.name, d)
			}
			continue
		}
		if d.fail != tt.wantFail {
			t.Errorf("%s: fail = %v, want %v", tt.name, d.fail, tt.wantFail)
		}
		for _, w := range tt.want {
			if !strings.Contains(d.reason, w) {
				t.Errorf("%s: reason %q lacks %q", tt.name, d.reason, w)
			}
		}
	}
}

func TestStaleNamespaces(t *testing.T) {
	alive := map[int]bool{100: true}
	isAlive := func(pid int) bool { return alive[pid] }
	names := []string{
		"gct-100-abcdef-srv", // live owner
		"gct-200-abcdef-srv", // dead owner
		"gct-200-abcdef-cli",
		"gct-300-0a1b2c-cli",
		"gct-x-abcdef-srv",     // not generated
		"mybed-srv",            // hand-made
		"gct-400-abcdef-other", // not a bed end
		"gct-400-ABCDEF-srv",   // not our hex
	}
	got := staleNamespaces(names, isAlive)
	want := []string{"gct-200-abcdef-srv", "gct-200-abcdef-cli", "gct-300-0a1b2c-cli"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("staleNamespaces = %q, want %q", got, want)
	}
}

func TestNewRejectsBadNames(t *testing.T) {
	for _, name := range []string{"-x", "a b", "a/b", "x;rm", strings.Repeat("a", 201)} {
		if _, err := New(name); err == nil || !strings.Contains(err.Error(), "bad name") {
			t.Errorf("New(%q) = %v, want bad name", name, err)
		}
	}
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName(), UniqueName()
	if a == b {
		t.Fatalf("two UniqueName calls gave %q", a)
	}
	for _, n := range []string{a, b} {
		if !validName.MatchString(n) || !staleName.MatchString(n+"-srv") {
			t.Fatalf("UniqueName %q does not match the bed name patterns", n)
		}
	}
}
