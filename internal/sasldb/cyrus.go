// Package sasldb is the part of Cyrus SASL that memcached's -S relies on
// when built against libsasl2 without its own password file: where the
// server's memcached.conf is looked for, what it says (mech_list,
// sasldb_path, pwcheck_method, auxprop_plugin), and the userPassword
// secrets saslpasswd2 keeps in the sasldb2 Berkeley DB file.
package sasldb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// DefaultDBPath is libsasl2's sasldb_path when the configuration names none.
const DefaultDBPath = "/etc/sasldb2"

// confName is the configuration file: the SASL application name memcached
// gives sasl_server_init, plus ".conf".
const confName = "memcached.conf"

// searchPaths are memcached's fallbacks when $SASL_CONF_PATH is unset, each
// a (file, directory) pair: a memcached.conf directory holding a
// memcached.conf is used as the directory itself, else a memcached.conf
// file in /etc/sasl or /etc/sasl2 makes that the directory.
var searchPaths = []struct{ nested, file, dir string }{
	{"/etc/sasl/memcached.conf/memcached.conf", "/etc/sasl/memcached.conf", "/etc/sasl"},
	{"/etc/sasl2/memcached.conf/memcached.conf", "/etc/sasl2/memcached.conf", "/etc/sasl2"},
}

// Locate returns the configuration path memcached hands libsasl2: the
// value of $SASL_CONF_PATH when set (even to a directory that does not
// exist: libsasl2 then uses its defaults), else the first of searchPaths
// that exists. ok is false when there is none: memcached then fails to
// initialise SASL and exits.
func Locate(getenv func(string) (string, bool), exists func(string) bool) (path string, ok bool) {
	if v, set := getenv("SASL_CONF_PATH"); set {
		return v, true
	}
	for _, s := range searchPaths {
		if exists(s.nested) {
			return s.file, true
		}
		if exists(s.file) {
			return s.dir, true
		}
	}
	return "", false
}

// Config is the server's SASL configuration as libsasl2 reads it.
type Config struct {
	// File is the memcached.conf read; "" when the path had none.
	File string
	// Mechanisms is mech_list, upper-cased, in its order; nil when unset
	// (libsasl2 then offers every mechanism it has).
	Mechanisms []string
	// DBPath is sasldb_path (DefaultDBPath when unset).
	DBPath string
	// PwcheckMethod and AuxpropPlugin are as given ("" when unset: auxprop
	// with the sasldb plugin, the only setup read here).
	PwcheckMethod, AuxpropPlugin string

	db dbCache
}

// Load reads memcached.conf from the first directory of path (a
// colon-separated list, as libsasl2 takes it) that has one; with none the
// defaults apply. A memcached.conf that exists but cannot be read is an
// error: the server would otherwise run without the setup it was given.
func Load(path string) (*Config, error) {
	c := &Config{DBPath: DefaultDBPath}
	for _, dir := range strings.Split(path, ":") {
		file := filepath.Join(dir, confName)
		data, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue // libsasl2 goes on past a path it cannot use (a file given as the directory, say)
		}
		if err != nil {
			return nil, err
		}
		c.File = file
		if err := c.parse(data); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		break
	}
	return c, nil
}

// parse reads libsasl2's "option: value" lines; blank lines and lines
// starting with '#' are skipped.
func (c *Config) parse(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, value, found := strings.Cut(line, ":")
		if !found {
			return fmt.Errorf("line %d: no ':' after the option name", n)
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "mech_list":
			c.Mechanisms = []string{}
			for _, m := range strings.Fields(value) { // libsasl2 splits on whitespace only
				c.Mechanisms = append(c.Mechanisms, strings.ToUpper(m))
			}
		case "sasldb_path":
			c.DBPath = value
		case "pwcheck_method":
			c.PwcheckMethod = value
		case "auxprop_plugin":
			c.AuxpropPlugin = value
		}
	}
	return sc.Err()
}

// Supported says why the configuration needs something beyond auxprop
// with sasldb, or nil.
func (c *Config) Supported() error {
	if m := c.PwcheckMethod; m != "" && m != "auxprop" {
		return fmt.Errorf("pwcheck_method %q: only auxprop (the sasldb2 file) is supported", m)
	}
	if p := c.AuxpropPlugin; p != "" && p != "sasldb" {
		return fmt.Errorf("auxprop_plugin %q: only sasldb is supported", p)
	}
	return nil
}

// Password returns user's userPassword in realm from the sasldb file. As
// libsasl2 opens the database at each lookup, saslpasswd2's changes apply
// to the next authentication: the file is parsed again when its identity
// (os.SameFile), size or modification time changes, and otherwise answered from the last
// parse, so a login costs a stat and a map lookup, not a read of the file.
func (c *Config) Password(user, realm string) ([]byte, error) {
	entries, err := c.db.load(c.DBPath)
	if err != nil {
		return nil, err
	}
	pw, ok := entries[user+"\x00"+realm+"\x00userPassword"]
	if !ok {
		return nil, ErrNoUser
	}
	return pw, nil
}

// dbCache is the last parse of the sasldb file and the file's FileInfo
// then, which says whether it is still the same file with the same size
// and modification time.
type dbCache struct {
	mu      sync.Mutex
	path    string
	info    os.FileInfo
	entries map[string][]byte
	parses  int // how many times the file was read (tests)
}

func (d *dbCache) load(path string) (map[string][]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries != nil && d.path == path && os.SameFile(d.info, fi) &&
		d.info.Size() == fi.Size() && d.info.ModTime().Equal(fi.ModTime()) {
		return d.entries, nil
	}
	entries, err := readHash(path)
	if err != nil {
		return nil, err
	}
	d.parses++
	d.entries, d.path, d.info = entries, path, fi
	return entries, nil
}

// ErrNoUser is Password's error for a user the database does not have.
var ErrNoUser = errors.New("no such user")
