package main

import (
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
