// Package config is gocached's command line: memcached's flags and
// gocached's own, read as memcached's getopt loop reads them, checked with
// memcached's messages and exit statuses, and decoded once into a typed
// Options (the -o suboptions into Extended). The man page and -h are
// rendered from the same flag table.
package config
