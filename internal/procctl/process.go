// Package procctl is the process's life around the server, as memcached
// leads it: core file and open files limits, -d's daemon, -k's locked
// memory, -u's drop from root (with the files made as that user), and
// the pid file.
package procctl

import "github.com/gocached/gocached/internal/config"

// Process carries the process-level flags' methods: setting up the
// process and handing it over to -u's user as memcached does.
type Process config.Process
