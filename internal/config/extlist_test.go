package config

import (
	"strings"
	"testing"
)

func TestParseExtOptions(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string // name=value of each setting
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"hashpower=20,idle_timeout=5"}, []string{"hashpower=20", "idle_timeout=5"}, ""},
		{[]string{"idle_timeout=0"}, []string{"idle_timeout=0"}, ""},
		{[]string{"modern", "no_lru_crawler,ext_path=/tmp/x:1G"}, []string{"modern=", "no_lru_crawler=", "ext_path=/tmp/x:1G"}, ""},
		{[]string{"slab_automove_ratio=0.8"}, []string{"slab_automove_ratio=0.8"}, ""},
		{[]string{"bogus"}, nil, `Illegal suboption "bogus"`},
		{[]string{"ext_"}, nil, `Illegal suboption "ext_"`},
		{[]string{"hashpower"}, nil, "Missing numeric argument for hashpower"},
		// memcached's atoi reads "" as 0 and starts; gocached refuses it.
		{[]string{"idle_timeout="}, nil, `invalid value for idle_timeout: ""`},
		{[]string{"idle_timeout=x"}, nil, "invalid value for idle_timeout"},
		// memcached's getsubopt loop: one trailing comma ends the list, an
		// empty suboption anywhere else is illegal.
		{[]string{"track_sizes,"}, []string{"track_sizes="}, ""},
		{[]string{""}, nil, ""},
		{[]string{","}, nil, `Illegal suboption ""`},
		{[]string{",track_sizes"}, nil, `Illegal suboption ""`},
		{[]string{"track_sizes,,modern"}, nil, `Illegal suboption ""`},
		{[]string{"track_sizes,,"}, nil, `Illegal suboption ""`},
	}
	for _, tt := range tests {
		got, err := parseExtOptions(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseExtOptions(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseExtOptions(%q): %v", tt.in, err)
			continue
		}
		var names []string
		for _, s := range got {
			names = append(names, s.name+"="+s.value)
		}
		if strings.Join(names, " ") != strings.Join(tt.want, " ") {
			t.Errorf("parseExtOptions(%q) = %v, want %v", tt.in, names, tt.want)
		}
	}
}
