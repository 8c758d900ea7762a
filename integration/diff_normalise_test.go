package integration

import "testing"

// TestNormalise pins each documented normalisation rule, and that
// everything else passes through untouched.
func TestNormalise(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		keep           map[string]bool
	}{
		{"plain replies unchanged", "STORED\r\nERROR\r\nCLIENT_ERROR bad data chunk\r\n", "STORED\r\nERROR\r\nCLIENT_ERROR bad data chunk\r\n", nil},
		{"get keeps everything", "VALUE k 5 3\r\nabc\r\nEND\r\n", "VALUE k 5 3\r\nabc\r\nEND\r\n", nil},
		{"gets cas masked", "VALUE k 5 3 12345\r\nabc\r\nEND\r\n", "VALUE k 5 3 <cas>\r\nabc\r\nEND\r\n", nil},
		{"zero cas kept (-C)", "VALUE k 0 1 0\r\nx\r\nEND\r\n", "VALUE k 0 1 0\r\nx\r\nEND\r\n", nil},
		{"data that looks like a reply", "VALUE k 0 15\r\nVERSION 1\r\nSTAT\r\nEND\r\n", "VALUE k 0 15\r\nVERSION 1\r\nSTAT\r\nEND\r\n", nil},
		{"padded number trimmed", "VALUE n 0 4\r\n1   \r\nEND\r\n", "VALUE n 0 1\r\n1\r\nEND\r\n", nil},
		{"padded non-number kept", "VALUE n 0 4\r\nab  \r\nEND\r\n", "VALUE n 0 4\r\nab  \r\nEND\r\n", nil},
		{"version masked", "VERSION 1.6.18\r\n", "VERSION <version>\r\n", nil},
		{"truncated value kept", "VALUE k 0 10\r\nabc", "VALUE k 0 10\r\nabc", nil},
		{
			"general stats sorted, volatile masked",
			"STAT pid 77\r\nSTAT get_hits 3\r\nSTAT cmd_get 4\r\nEND\r\n",
			"STAT cmd_get 4\r\nSTAT get_hits 3\r\nSTAT pid <v>\r\nEND\r\n", nil,
		},
		{
			"extra candidate fields dropped, missing ones kept",
			"STAT pid 1\r\nSTAT gocached_only 9\r\nSTAT cmd_get 4\r\nEND\r\n",
			"STAT cmd_get 4\r\nSTAT pid <v>\r\nEND\r\n",
			map[string]bool{"pid": true, "cmd_get": true},
		},
		{
			"settings reduced to compared fields",
			"STAT maxbytes 1024\r\nSTAT verbosity 0\r\nSTAT maxconns 10\r\nEND\r\n",
			"STAT maxbytes 1024\r\nSTAT maxconns 10\r\nEND\r\n", nil,
		},
		{"slab stats omitted", "STAT 1:chunk_size 96\r\nSTAT active_slabs 1\r\nEND\r\n", "STAT <omitted>\r\nEND\r\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(normalise([]byte(c.in), c.keep)); got != c.want {
				t.Errorf("normalise(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

// TestExpandCAS checks {cas:KEY} takes the latest unique for that key.
func TestExpandCAS(t *testing.T) {
	replies := []byte("VALUE a 0 1 5\r\nx\r\nEND\r\nVALUE b 0 1 6\r\ny\r\nEND\r\nVALUE a 0 1 9\r\nz\r\nEND\r\n")
	got, err := expandCAS("cas a 0 0 1 {cas:a}\r\ncas b 0 0 1 {cas:b}\r\n", replies)
	if err != nil || string(got) != "cas a 0 0 1 9\r\ncas b 0 0 1 6\r\n" {
		t.Fatalf("expandCAS = %q, %v", got, err)
	}
	if _, err := expandCAS("cas c 0 0 1 {cas:c}\r\n", replies); err == nil {
		t.Fatal("expandCAS with no gets reply for c: want an error")
	}
}
