package cli

import (
	"bytes"
	"strings"
	"testing"
)

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run("gocached", args, &out, &errb)
	return code, out.String(), errb.String()
}

// oneLineErr checks stderr is exactly one line containing every want.
func oneLineErr(t *testing.T, stderr string, want ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one line: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q lacks %q", stderr, w)
		}
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing subcommand"},
		{[]string{"frob"}, `unknown subcommand "frob"`},
		{[]string{"napi"}, "missing napi subcommand"},
		{[]string{"napi", "list"}, `unknown napi subcommand "list"`},
		{[]string{"napi", "set"}, "--id is required"},
		{[]string{"napi", "set", "--id", "5"}, "at least one of"},
		{[]string{"napi", "set", "--id", "x", "--defer-hard-irqs", "1"}, "invalid argument"},
		{[]string{"napi", "set", "--id", "5", "--defer-hard-irqs", "-1"}, "defer-hard-irqs"},
		{[]string{"napi", "show", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"napi", "show", "extra"}, `unexpected argument "extra"`},
		{[]string{"napi", "restore"}, "--interface (or --state) is required"},
		{[]string{"napi", "apply", "--poll-mode", "base"}, "--interface is required"},
		{[]string{"napi", "apply", "--interface", "lo", "--poll-mode", "turbo"}, `unknown poll mode "turbo"`},
		{[]string{"napi", "apply", "--interface", "lo"}, "give --poll-mode"},
		{[]string{"doctor", "--pin-cpus"}, "flag needs an argument"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (stdout %q)", code, ExitUsage, stdout)
			}
			oneLineErr(t, stderr, tt.want)
		})
	}
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"napi", "help"}, {"help"}} {
		code, stdout, _ := run(args...)
		if code != ExitOK || !strings.Contains(stdout, "napi restore") || !strings.Contains(stdout, "doctor") {
			t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
		}
	}
	code, stdout, _ := run("napi", "show", "--help")
	if code != ExitOK || !strings.Contains(stdout, "--interface") {
		t.Errorf("show --help: exit %d, %q", code, stdout)
	}
}

// A nonexistent --interface fails clearly in every command that takes one.
func TestRunMissingInterface(t *testing.T) {
	for _, args := range [][]string{
		{"napi", "show", "--interface", "nosuch0"},
		{"napi", "apply", "--interface", "nosuch0", "--poll-mode", "suspend20", "--state", t.TempDir() + "/s.json"},
	} {
		t.Run(args[1], func(t *testing.T) {
			code, _, stderr := run(args...)
			if code != ExitFail {
				t.Errorf("exit %d, want %d", code, ExitFail)
			}
			oneLineErr(t, stderr, `interface "nosuch0" not found`, "ip link")
		})
	}
	code, stdout, _ := run("doctor", "--interface", "nosuch0")
	if code != ExitFail || !strings.Contains(stdout, `FAIL interface nosuch0: interface "nosuch0" not found`) {
		t.Errorf("doctor: exit %d:\n%s", code, stdout)
	}
}

func TestRunRestoreWithoutState(t *testing.T) {
	code, _, stderr := run("napi", "restore", "--interface", "lo", "--state", t.TempDir()+"/none.json")
	if code != ExitFail {
		t.Errorf("exit %d", code)
	}
	oneLineErr(t, stderr, "nothing to restore for lo", "no such file")
}

// Loopback has no NAPIs: doctor warns, and fails once a mode needs them.
func TestDoctorLoopback(t *testing.T) {
	code, stdout, _ := run("doctor", "--interface", "lo")
	if code != ExitOK || !strings.Contains(stdout, "WARN interface lo: no NAPIs") {
		t.Errorf("doctor lo: exit %d:\n%s", code, stdout)
	}
	for _, mode := range []string{"suspend20", "napibusy", "fullbusy", "defer20", "suspend0"} {
		code, stdout, _ := run("doctor", "--interface", "lo", "--poll-mode", mode)
		if code != ExitFail || !strings.Contains(stdout, "FAIL interface lo: no NAPIs") {
			t.Errorf("doctor lo %s: exit %d:\n%s", mode, code, stdout)
		}
	}
	for _, topic := range []string{"kernel:", "EPIOCSPARAMS:", "SO_INCOMING_NAPI_ID:", "privileges:", "netdev family:", "irq-suspend-timeout:"} {
		if !strings.Contains(stdout, topic) {
			t.Errorf("doctor output lacks %s:\n%s", topic, stdout)
		}
	}
}

func TestShowLoopbackJSONAndTable(t *testing.T) {
	code, stdout, stderr := run("napi", "show", "--interface", "lo", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"napis": []`) || !strings.Contains(stdout, `"type": "rx"`) {
		t.Errorf("lo json: %s", stdout)
	}
	code, stdout, _ = run("napi", "show", "--interface", "lo")
	if code != ExitOK || !strings.Contains(stdout, "no NAPI instances on lo") || !strings.Contains(stdout, "# lo (ifindex 1): 1 rx, 1 tx queues") {
		t.Errorf("lo table: exit %d:\n%s", code, stdout)
	}
}
