package pollmode

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/config"
)

func TestListenHosts(t *testing.T) {
	tests := []struct {
		listen string
		want   []string
	}{
		{"", []string{""}},
		{"10.0.0.1", []string{"10.0.0.1"}},
		{"10.0.0.1:11211", []string{"10.0.0.1"}},
		{"10.0.0.1,127.0.0.1:5", []string{"10.0.0.1", "127.0.0.1"}},
		{"::1", []string{"::1"}},
		{"[::1]", []string{"::1"}},
		{"[fe80::1]:11211", []string{"fe80::1"}},
		{"0.0.0.0", []string{"0.0.0.0"}},
	}
	for _, tt := range tests {
		got, err := listenHosts(tt.listen)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("listenHosts(%q) = %q, %v; want %q", tt.listen, got, err, tt.want)
		}
	}
}

func TestWarnInconsistent(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of warnings; none expected when empty
	}{
		{[]string{"--poll-mode=suspend20"}, nil},
		{[]string{"--poll-mode=suspend0"}, nil},
		{[]string{"--poll-mode=napibusy"}, nil},
		{[]string{"--poll-mode=suspend20", "--prefer-busy-poll=false"}, []string{"only takes effect while reactors busy poll"}},
		{[]string{"--poll-mode=suspend20", "--defer-hard-irqs=0"}, []string{"rides on IRQ deferral"}},
		{[]string{"--poll-mode=suspend20", "--irq-suspend-timeout=10000"}, []string{"larger than gro-flush-timeout"}},
		{[]string{"--poll-mode=fullbusy", "--engine=go"}, []string{"need --engine=epoll"}},
	}
	for _, tt := range tests {
		o, err := config.Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		warnInconsistent(o, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
		got := buf.String()
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%q: unexpected warnings:\n%s", tt.args, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: warnings lack %q:\n%s", tt.args, w, got)
			}
		}
		if n := strings.Count(got, "\n"); n != len(tt.want) {
			t.Errorf("%q: %d warnings, want %d:\n%s", tt.args, n, len(tt.want), got)
		}
	}
}
