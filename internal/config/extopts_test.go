package config

import (
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
)

func TestApplyExtSettingsCrawler(t *testing.T) {
	for _, c := range []struct {
		opts string
		off  bool
	}{
		{"", false},
		{"no_lru_crawler", true},
		{"no_modern", true},
		{"modern", false},
		{"no_modern,lru_crawler", false},
		{"lru_crawler,no_lru_crawler", true},
	} {
		ext, err := parseExtOptions([]string{c.opts})
		if err != nil {
			t.Fatalf("%q: %v", c.opts, err)
		}
		var s protocol.Settings
		applyExtSettings(ext, &s)
		if s.LRUCrawlerDisabled != c.off {
			t.Errorf("-o %q: LRUCrawlerDisabled = %v, want %v", c.opts, s.LRUCrawlerDisabled, c.off)
		}
	}
}

func TestApplyExtSettingsWatcherLogbuf(t *testing.T) {
	ext, err := parseExtOptions([]string{"watcher_logbuf_size=8"})
	if err != nil {
		t.Fatal(err)
	}
	var s protocol.Settings
	applyExtSettings(ext, &s)
	if s.WatcherLogbufSize != 8192 {
		t.Fatalf("WatcherLogbufSize = %d, want 8192 (memcached's unit is KB)", s.WatcherLogbufSize)
	}
}

func TestApplyExtSettingsMaintainer(t *testing.T) {
	for _, c := range []struct {
		opts string
		off  bool
	}{
		{"", false},
		{"no_lru_maintainer", true},
		{"no_modern", true},
		{"no_modern,lru_maintainer", false},
		{"no_lru_crawler", false},
	} {
		ext, err := parseExtOptions([]string{c.opts})
		if err != nil {
			t.Fatalf("%q: %v", c.opts, err)
		}
		var s protocol.Settings
		applyExtSettings(ext, &s)
		if s.LRUMaintainerDisabled != c.off {
			t.Errorf("-o %q: LRUMaintainerDisabled = %v, want %v", c.opts, s.LRUMaintainerDisabled, c.off)
		}
	}
}

// TestHashPowerOption: -o hashpower takes memcached's range, 12 to 32, with
// its messages, and reaches stats settings as hashpower_init.
func TestHashPowerOption(t *testing.T) {
	for _, c := range []struct {
		opt  string
		want int    // HashPowerInit
		err  string // part of the error, "" for none
	}{
		{"hashpower=12", 12, ""},
		{"hashpower=20", 20, ""},
		{"hashpower=32", 32, ""},
		{"hashpower=11", 0, "Initial hashtable multiplier of 11 is too low"},
		{"hashpower=33", 0, "Initial hashtable multiplier of 33 is too high"},
		{"hashpower", 0, "Missing numeric argument for hashpower"},
		{"hashpower=abc", 0, "Initial hashtable multiplier of 0 is too low"},
		{"hashpower=20x", 20, ""},
	} {
		ext, err := parseExtOptions([]string{c.opt})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("-o %s: error %v, want %q", c.opt, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("-o %s: %v", c.opt, err)
		}
		var s protocol.Settings
		applyExtSettings(ext, &s)
		if s.HashPowerInit != c.want || extHashPower(ext) != c.want {
			t.Errorf("-o %s: hashpower_init %d, store level %d; want %d", c.opt, s.HashPowerInit, extHashPower(ext), c.want)
		}
	}
	ext, _ := parseExtOptions([]string{"no_hashexpand"})
	if !extHas(ext, "no_hashexpand") || extHas(ext, "hashpower") {
		t.Error("extHas: no_hashexpand given, hashpower not")
	}
}

func TestLockTableRefusal(t *testing.T) {
	for _, c := range []struct {
		hashpower, threads int
		refused            bool
	}{
		{0, 64, false}, // not given: memcached's 16
		{11, 2, false}, {10, 2, true}, {11, 3, true}, {12, 3, false},
		{12, 4, true}, {13, 4, false}, {13, 10, true}, {14, 10, false},
		{14, 20, true}, {15, 21, true}, {16, 64, false},
	} {
		if got := LockTableRefusal(c.hashpower, c.threads) != ""; got != c.refused {
			t.Errorf("hashpower %d, -t %d: refused %v, want %v", c.hashpower, c.threads, got, c.refused)
		}
	}
}

// applyExtSettings is the decoded suboptions applied to s, as the server does.
func applyExtSettings(ext []extSetting, s *protocol.Settings) {
	e := decodeExtended(ext, 1<<20)
	e.Apply(s)
}
