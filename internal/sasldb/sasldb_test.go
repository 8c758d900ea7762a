package sasldb

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// saslpasswd2 runs Cyrus's own tool on db, giving pass on stdin; the
// database is what memcached's libsasl2 would read.
func saslpasswd2(t *testing.T, db, user, realm, pass string, extra ...string) {
	t.Helper()
	path, err := exec.LookPath("saslpasswd2")
	if err != nil {
		if os.Getenv("GOCACHED_REQUIRE_TESTBED") == "1" {
			t.Fatal("saslpasswd2 is missing (Debian package: sasl2-bin)")
		}
		t.Skip("saslpasswd2 is missing (Debian package: sasl2-bin)")
	}
	args := append([]string{"-a", "memcached", "-u", realm, "-f", db, "-c", "-p"}, extra...)
	cmd := exec.Command(path, append(args, user)...)
	cmd.Stdin = strings.NewReader(pass + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("saslpasswd2 %s@%s: %v\n%s", user, realm, err, out)
	}
}

func TestPasswordFromSaslpasswd2(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sasldb2")
	long := strings.Repeat("p", 2000) // larger than a quarter page: an overflow chain (saslpasswd2 keeps at most 2048 bytes)
	saslpasswd2(t, db, "big", "r", long)
	for i := range 60 { // more pairs than one 4 KB page holds
		saslpasswd2(t, db, "user"+string(rune('a'+i%26))+strings.Repeat("x", i), "realm"+string(rune('0'+i%3)), "pass"+strings.Repeat("y", i))
	}
	saslpasswd2(t, db, "testuser", "memcached.realm", "testpass")
	saslpasswd2(t, db, "gone", "memcached.realm", "x")
	cmd := exec.Command("saslpasswd2", "-a", "memcached", "-u", "memcached.realm", "-f", db, "-d", "gone")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("saslpasswd2 -d: %v\n%s", err, out)
	}
	c := &Config{DBPath: db}
	for _, tc := range []struct {
		user, realm, want string
		err               error
	}{
		{"testuser", "memcached.realm", "testpass", nil},
		{"big", "r", long, nil},
		{"userc" + strings.Repeat("x", 28), "realm1", "pass" + strings.Repeat("y", 28), nil},
		{"userh" + strings.Repeat("x", 59), "realm2", "pass" + strings.Repeat("y", 59), nil},
		{"testuser", "other.realm", "", ErrNoUser},
		{"testuse", "memcached.realm", "", ErrNoUser},
		{"gone", "memcached.realm", "", ErrNoUser},
	} {
		pw, err := c.Password(tc.user, tc.realm)
		if !errors.Is(err, tc.err) || string(pw) != tc.want {
			t.Errorf("Password(%q, %q) = %.20q, %v; want %.20q, %v", tc.user, tc.realm, pw, err, tc.want, tc.err)
		}
	}
	if _, err := (&Config{DBPath: filepath.Join(t.TempDir(), "none")}).Password("a", "b"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing database: %v", err)
	}
	notDB := filepath.Join(t.TempDir(), "text")
	os.WriteFile(notDB, bytes.Repeat([]byte("user:pass\n"), 100), 0o644)
	if _, err := (&Config{DBPath: notDB}).Password("user", "x"); !errors.Is(err, errNotHash) {
		t.Errorf("a text file: %v", err)
	}
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    string
		envSet bool
		files  []string
		want   string
		ok     bool
	}{
		{"env wins", "/opt/conf", true, []string{"/etc/sasl2/memcached.conf"}, "/opt/conf", true},
		{"env to nowhere", "/nonexistent", true, nil, "/nonexistent", true},
		{"etc sasl file", "", false, []string{"/etc/sasl/memcached.conf", "/etc/sasl2/memcached.conf"}, "/etc/sasl", true},
		{"etc sasl2 file", "", false, []string{"/etc/sasl2/memcached.conf"}, "/etc/sasl2", true},
		{"nested directory", "", false, []string{"/etc/sasl2/memcached.conf", "/etc/sasl2/memcached.conf/memcached.conf"}, "/etc/sasl2/memcached.conf", true},
		{"none", "", false, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(string) (string, bool) { return tc.env, tc.envSet }
			exists := func(p string) bool {
				for _, f := range tc.files {
					if f == p {
						return true
					}
				}
				return false
			}
			got, ok := Locate(getenv, exists)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Locate = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "memcached.conf"), []byte("# memcached's SASL\nmech_list: plain cram-md5\n\n  log_level: 5\nsasldb_path:   /tmp/x.sasldb  \npwcheck_method: auxprop\n"), 0o644)
	c, err := Load("/nonexistent:" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Mechanisms, " ") != "PLAIN CRAM-MD5" || c.DBPath != "/tmp/x.sasldb" || c.File != filepath.Join(dir, "memcached.conf") || c.Supported() != nil {
		t.Errorf("Load: %+v, supported: %v", c, c.Supported())
	}
	c, err = Load(t.TempDir())
	if err != nil || c.Mechanisms != nil || c.DBPath != DefaultDBPath || c.File != "" {
		t.Errorf("no memcached.conf: %+v, %v", c, err)
	}
	for _, conf := range []string{"pwcheck_method: saslauthd\n", "auxprop_plugin: sql\n"} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "memcached.conf"), []byte(conf), 0o644)
		if c, err := Load(d); err != nil || c.Supported() == nil {
			t.Errorf("%q: supported (%v)", conf, err)
		}
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "memcached.conf"), []byte("mech_list plain\n"), 0o644)
	if _, err := Load(d); err == nil {
		t.Error("a line without ':' was accepted")
	}
}

// FuzzParseHash: no input crashes the reader or makes it read outside
// the file.
func FuzzParseHash(f *testing.F) {
	page := make([]byte, 512*3)
	le := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
	le(page[12:], hashMagic)
	le(page[20:], 512)
	p := page[512:]
	p[25], p[20] = pHash, 2
	p[26], p[27] = 0xf0, 0x01 // key at 496
	p[28], p[29] = 0xe0, 0x01 // data at 480
	p[496], p[480] = hKeyData, hKeyData
	f.Add(page)
	o := append([]byte(nil), page...)
	o[512+480] = hOffPage
	le(o[512+484:], 2)
	le(o[512+488:], 10)
	o[1024+25], o[1024+22] = pOverflow, 10
	f.Add(o)
	f.Fuzz(func(t *testing.T, data []byte) {
		parseHash(data)
	})
}
