package main

import "github.com/gocached/gocached/internal/config"

// processOptions carries the process-level flags' methods: setting up and
// handing over the process as memcached does.
type processOptions config.Process
