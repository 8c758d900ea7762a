package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Long Options abbreviated as glibc's getopt_long takes them, for memcached.
func TestLongOptionAbbreviations(t *testing.T) {
	tests := []struct {
		args  []string
		check func(o *Options) bool
	}{
		{[]string{"--conn=5"}, func(o *Options) bool { return o.Reactor.MaxConns == 5 }},
		{[]string{"--conn", "7"}, func(o *Options) bool { return o.Reactor.MaxConns == 7 }},
		{[]string{"--memory-l=128"}, func(o *Options) bool { return o.Memory == 128<<20 }},
		{[]string{"--thr", "3"}, func(o *Options) bool { return o.Reactor.Threads == 3 }},
		{[]string{"--lock"}, func(o *Options) bool { return o.Proc.LockMem }},
		{[]string{"--disable-c"}, func(o *Options) bool { return o.NoCAS }},
		{[]string{"--po=4242"}, func(o *Options) bool { return o.Reactor.Port == 4242 }}, // port, not gocached's --poll-mode
		{[]string{"--verbose=2", "--verb"}, func(o *Options) bool { return o.Verbosity == 2 }},
		{[]string{"--ext", "idle_timeout=9"}, func(o *Options) bool { return len(o.ext) == 1 && o.ext[0].name == "idle_timeout" }},
		// The value of an option that takes one is skipped, whatever it
		// looks like: -l's value here is not an abbreviation.
		{[]string{"-l", "--thr", "--listen-b=9"}, func(o *Options) bool { return o.Reactor.Listen == "--thr" && o.Reactor.Backlog == 9 }},
		{[]string{"-vl", "--m", "--listen", "10"}, func(o *Options) bool { return o.Reactor.Listen == "10" && o.Verbosity == 1 }},
		// A prefix of none of memcached's Options may abbreviate gocached's.
		{[]string{"--eng=go"}, func(o *Options) bool { return o.Engine == "go" }},
		{[]string{"--pin", "1"}, func(o *Options) bool { return reflect.DeepEqual(o.Reactor.Epoll.PinCPUs, []int{1}) }},
		{[]string{"--", "--m"}, nil}, // after --, nothing is an option (and an operand is refused)
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := Parse(tt.args)
			if tt.check == nil {
				if err == nil || !strings.Contains(err.Error(), `unexpected argument "--m"`) {
					t.Fatalf("Parse(%q) = %v, want the operand refused", tt.args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if !tt.check(o) {
				t.Errorf("Parse(%q) = %+v", tt.args, o)
			}
		})
	}
}

// Refusals as glibc's getopt_long words them for memcached 1.6.18.
func TestLongOptionAbbreviationErrors(t *testing.T) {
	const illegal = "\nIllegal argument \"?\"\n"
	tests := []struct{ arg, stderr string }{
		{"--m=5", "gocached: option '--m=5' is ambiguous; possibilities: '--memory-limit' '--max-reqs-per-event' '--max-item-size' '--memory-file'"},
		{"--lis", "gocached: option '--lis' is ambiguous; possibilities: '--listen' '--listen-backlog'"},
		{"--ver", "gocached: option '--ver' is ambiguous; possibilities: '--version' '--verbose'"},
		{"--lock=5", "gocached: option '--lock-memory' doesn't allow an argument"},
		{"--lock-memory=true", "gocached: option '--lock-memory' doesn't allow an argument"},
		{"--listen", "gocached: option '--listen' requires an argument"},
		{"--zzz", "gocached: unrecognized option '--zzz'"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, err := Parse([]string{tt.arg})
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q) error = %v, want a UsageError", tt.arg, err)
			}
			var stderr bytes.Buffer
			ue.Write(&stderr)
			if ue.Status != exitFailure {
				t.Errorf("exit status %d, want %d", ue.Status, exitFailure)
			}
			if got := stderr.String(); got != tt.stderr+illegal {
				t.Errorf("stderr %q, want %q", got, tt.stderr+illegal)
			}
		})
	}
}
