package integration

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestSASLCyrusClients: -S with Cyrus SASL's setup, as a Debian admin
// configures memcached (SASL_CONF_PATH with a memcached.conf naming the
// mechanisms and the sasldb2 that saslpasswd2 fills). libmemcached through
// pylibmc authenticates with the strongest mechanism listed (CRAM-MD5,
// SCRAM-SHA-256, LOGIN) and Dalli with PLAIN; both are refused a wrong
// password. Every engine and Debian's memcached run the same clients
// against the same files.
func TestSASLCyrusClients(t *testing.T) {
	tool := requireTool(t, "saslpasswd2")
	py := interpreterWith(t, "/usr/bin/python3", []string{"-c", "import pylibmc"}, "python3-pylibmc")
	ruby := interpreterWith(t, "ruby", []string{"-e", `require "dalli"`}, "ruby-dalli")
	// memcached runs as nobody: the files must be readable to it.
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	db := filepath.Join(dir, "sasldb2")
	cmd := testproc.Command(tool, "-p", "-c", "-a", "memcached", "-u", "memcached.realm", "-f", db, "testuser")
	cmd.Stdin = strings.NewReader("testpass")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("saslpasswd2: %v\n%s", err, out)
	}
	os.Chmod(db, 0o644)
	for _, mc := range []struct {
		mechList, listed string
		dalli            bool // Dalli speaks PLAIN only
	}{
		{"cram-md5 plain", "CRAM-MD5 PLAIN", true},
		{"scram-sha-256 scram-sha-1 plain", "SCRAM-SHA-256 SCRAM-SHA-1 PLAIN", true},
		{"login", "LOGIN", false},
	} {
		confDir := filepath.Join(dir, strings.ReplaceAll(mc.mechList, " ", "_"))
		os.Mkdir(confDir, 0o755)
		conf := "mech_list: " + mc.mechList + "\nsasldb_path: " + db + "\n"
		if err := os.WriteFile(filepath.Join(confDir, "memcached.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(mc.listed, func(t *testing.T) {
			forEachTarget(t, func(t *testing.T, tg target) {
				sp := spec(t, tg, "-l", "127.0.0.1", "-U", "0", "-S")
				sp.Wrap = []string{"env", "SASL_CONF_PATH=" + confDir}
				srv := startSpec(t, sp, false)
				addr := "127.0.0.1:" + strconv.Itoa(srv.Port())
				if got := saslMechanisms(t, addr); got != mc.listed {
					t.Errorf("SASL_LIST_MECHS: %q, want mech_list's order, %s", got, mc.listed)
				}
				t.Log(clientScript(t, py, "pylibmc_sasl.py", addr, "testuser@memcached.realm", "testpass"))
				if mc.dalli {
					t.Log(clientScript(t, ruby, "dalli_sasl.rb", addr, "testuser@memcached.realm", "testpass"))
				}
			})
		})
	}
}

// saslMechanisms asks addr for its SASL mechanisms over the binary protocol.
func saslMechanisms(t *testing.T, addr string) string {
	t.Helper()
	c := dialRaw(t, addr)
	req := make([]byte, 24)
	req[0], req[1] = 0x80, 0x20
	c.send(string(req))
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp := make([]byte, 24)
	if _, err := io.ReadFull(c.r, resp); err != nil {
		t.Fatalf("SASL_LIST_MECHS: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(resp[8:12]))
	if _, err := io.ReadFull(c.r, body); err != nil {
		t.Fatalf("SASL_LIST_MECHS body: %v", err)
	}
	return string(body)
}
