package server

import (
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"io"
	"log/slog"
	"os"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/sasldb"
)

// saslPasswordEnv names the password file -S checks, as in memcached.
const saslPasswordEnv = protocol.SASLPasswordEnv

// saslInitFailed is memcached's line when libsasl2 cannot start.
const saslInitFailed = "Error initializing sasl."

// saslConfig is -S: nil without it. With $MEMCACHED_SASL_PWDB set, the
// password file memcached builds with --enable-sasl-pwdb read; otherwise
// Cyrus SASL's setup, as Debian's memcached (built without that option)
// always uses: memcached.conf from $SASL_CONF_PATH, /etc/sasl or
// /etc/sasl2, and the users saslpasswd2 keeps in its sasldb_path. Without
// any configuration path memcached prints saslInitFailed and exits 1; so
// does gocached, first on stderr, then saying what it looked for.
func saslConfig(o *config.Options, log *slog.Logger, stderr io.Writer) (*protocol.SASL, error) {
	if !o.SASL {
		return nil, nil
	}
	if path := os.Getenv(saslPasswordEnv); path != "" {
		return protocol.NewSASL(path)
	}
	sasl, dir, cfg, err := cyrusSASL()
	if err != nil {
		fmt.Fprintln(stderr, saslInitFailed)
		return nil, err
	}
	log.Info("SASL: Cyrus configuration", "path", dir, "file", cfg.File, "sasldb", cfg.DBPath, "mechanisms", sasl.Mechanisms())
	return sasl, nil
}

// cyrusSASL sets -S up from Cyrus SASL's configuration, as memcached's
// libsasl2 finds and reads it.
func cyrusSASL() (*protocol.SASL, string, *sasldb.Config, error) {
	dir, ok := sasldb.Locate(os.LookupEnv, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
	if !ok {
		return nil, "", nil, errors.New("-S: no SASL configuration: set SASL_CONF_PATH to a directory holding memcached.conf, " +
			"create /etc/sasl2/memcached.conf (mech_list, sasldb_path; users from saslpasswd2 -a memcached), " +
			"or set " + saslPasswordEnv + " to a file of user:password lines")
	}
	cfg, err := sasldb.Load(dir)
	if err == nil {
		err = cfg.Supported()
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("-S: %w", err)
	}
	host, _ := os.Hostname() // memcached's realm is "" when gethostname fails
	sasl, err := protocol.NewCyrusSASL(cfg.Mechanisms, host, cfg.Password)
	if err != nil {
		return nil, "", nil, fmt.Errorf("-S: %w", err)
	}
	return sasl, dir, cfg, nil
}
