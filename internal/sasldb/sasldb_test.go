package sasldb

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
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
	cmd := testproc.Command(path, append(args, user)...)
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
	cmd := testproc.Command("saslpasswd2", "-a", "memcached", "-u", "memcached.realm", "-f", db, "-d", "gone")
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
	// Answered from one parse while the file stays as it is; saslpasswd2's
	// change is seen at the next lookup.
	if c.db.parses != 1 {
		t.Errorf("%d parses for one unchanged file", c.db.parses)
	}
	saslpasswd2(t, db, "testuser", "memcached.realm", "newpass")
	if pw, err := c.Password("testuser", "memcached.realm"); string(pw) != "newpass" || err != nil || c.db.parses != 2 {
		t.Errorf("after saslpasswd2 changed it: %q, %v (%d parses)", pw, err, c.db.parses)
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
	// libsasl2 splits mech_list on whitespace only, and goes past a path
	// that is a file rather than a directory.
	os.WriteFile(filepath.Join(d, "memcached.conf"), []byte("mech_list: plain,cram-md5 scram-sha-1\n"), 0o644)
	if c, err := Load(d); err != nil || strings.Join(c.Mechanisms, " ") != "PLAIN,CRAM-MD5 SCRAM-SHA-1" {
		t.Errorf("commas: %q, %v", c.Mechanisms, err)
	}
	if c, err := Load(filepath.Join(d, "memcached.conf")); err != nil || c.File != "" || c.Mechanisms != nil {
		t.Errorf("a file as the path: %+v, %v", c, err)
	}
}

// TestParseHashCorrupt: a length or page number from the file that points
// outside it is an error, never an allocation or a read out of bounds (a
// 2 GB overflow length once made a 32-bit build panic), and a set of
// duplicates is skipped rather than failing every lookup.
func TestParseHashCorrupt(t *testing.T) {
	base := hashFixture()
	if m, err := parseHash(base); err != nil || len(m) != 1 {
		t.Fatalf("fixture: %v, %v", m, err)
	}
	le := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
	for name, mutate := range map[string]func(b []byte){
		"2 GB overflow length":  func(b []byte) { b[512+480] = hOffPage; le(b[512+484:], 2); le(b[512+488:], 0x80000000) },
		"overflow page outside": func(b []byte) { b[512+480] = hOffPage; le(b[512+484:], 0xfffffff0); le(b[512+488:], 10) },
		"overflow loop": func(b []byte) {
			b[512+480] = hOffPage
			le(b[512+484:], 2)
			le(b[512+488:], 1000)
			b[1024+25] = pOverflow
			b[1024+22] = 1
			le(b[1024+16:], 2)
		},
		"entry offset in header": func(b []byte) { b[512+26], b[512+27] = 3, 0 },
		"odd entry count":        func(b []byte) { b[512+20] = 3 },
	} {
		b := append([]byte(nil), base...)
		mutate(b)
		if _, err := parseHash(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	b := append([]byte(nil), base...)
	b[512+480] = hDuplicate
	if m, err := parseHash(b); err != nil || len(m) != 0 {
		t.Errorf("a duplicate set: %v, %v; want it skipped", m, err)
	}
}

// hashFixture is a three-page little-endian hash file of 512-byte pages:
// the metadata page, a hash page holding one key/data pair, a free page.
func hashFixture() []byte {
	b := make([]byte, 512*3)
	le := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
	le(b[12:], hashMagic)
	le(b[20:], 512)
	p := b[512:]
	p[25], p[20] = pHash, 2
	p[26], p[27] = 0xf0, 0x01 // key at 496
	p[28], p[29] = 0xe0, 0x01 // data at 480
	p[496], p[480] = hKeyData, hKeyData
	return b
}

// FuzzParseHash: no input crashes the reader or makes it read outside
// the file.
func FuzzParseHash(f *testing.F) {
	page := hashFixture()
	f.Add(page)
	o := append([]byte(nil), page...)
	le := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
	o[512+480] = hOffPage
	le(o[512+484:], 2)
	le(o[512+488:], 10)
	o[1024+25], o[1024+22] = pOverflow, 10
	f.Add(o)
	f.Fuzz(func(t *testing.T, data []byte) {
		parseHash(data)
	})
}
