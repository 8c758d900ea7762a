package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestContribWrapperReadsConfLikeDebian: contrib's wrapper turns a
// memcached.conf into the same argument list as Debian's
// systemd-memcached-wrapper, line rules and quirks included (several
// options on a line, -dv skipped, comments after a value, a quoted value,
// an escaped '#', directives, an empty file meaning "-u root"). Both run
// a stub in place of the server that prints its arguments.
func TestContribWrapperReadsConfLikeDebian(t *testing.T) {
	dir := userDir(t) // root, as Debian's script insists
	stub := filepath.Join(dir, "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	debWrapper := debianWrapper(t, dir, stub)
	root, err := testproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(root, "contrib/systemd/gocached-wrapper")
	for name, conf := range map[string]string{
		"stock":                     serviceConf,
		"several options on a line": "-m 64 -c 2048\n-p 11211 -U 0\n",
		"-d and -h lines":           "-d\n-dv\n-h\n-hv\n-v\n",
		"comments and blanks":       "# c\n\n   -m 64   # trailing\n-vv#tight\n\t-t 2\t\n",
		"directives":                "logfile /var/log/memcached.log\nstray\n-l 127.0.0.1\n",
		"quoting and escapes":       "-P \"/run/memcached/my pid\"\n-I 2m\\#x\n-o 'modern,idle_timeout=5'\n",
		"empty":                     "",
		"comments only":             "# nothing\n#-m 64\n",
		"no final newline":          "-m 64\n-c 10",
	} {
		t.Run(name, func(t *testing.T) {
			conf := strings.NewReplacer("PORT", "11211", "USER", "memcache", "PIDFILE", "/run/memcached/memcached.pid").Replace(conf)
			path := filepath.Join(dir, "memcached.conf")
			if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := testproc.Command("perl", debWrapper, path).Output()
			if err != nil {
				t.Fatalf("Debian's wrapper: %v", err)
			}
			cmd := testproc.Command("sh", ours, path)
			cmd.Env = append(os.Environ(), "GOCACHED="+stub)
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("contrib wrapper: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("conf %q:\nDebian's wrapper runs %s\ncontrib's runs        %s", conf, want, got)
			}
		})
	}
}

// TestContribTmpfilesMatchDebian: the unit writes its pid file into
// /run/memcached after dropping to memcache, so the directory must be
// memcache's. contrib's tmpfiles line must be Debian's memcached package's
// own (the two packages then agree on it), and the unit must not also
// declare it as its RuntimeDirectory, which systemd would make root's.
func TestContribTmpfilesMatchDebian(t *testing.T) {
	const debian = "/usr/lib/tmpfiles.d/memcached.conf"
	want, err := os.ReadFile(debian)
	if err != nil {
		missing(t, "Debian's %s not found (Debian package: memcached): %v", debian, err)
	}
	root, err := testproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "contrib/systemd/gocached.tmpfiles"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		t.Errorf("contrib tmpfiles %q, Debian's %q", got, want)
	}
	unit, err := os.ReadFile(filepath.Join(root, "contrib/systemd/gocached.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(unit), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "RuntimeDirectory=") {
			t.Errorf("the unit declares %q: systemd would make /run/memcached root's and remove it at stop", line)
		}
	}
}
