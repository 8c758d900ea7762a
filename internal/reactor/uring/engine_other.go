//go:build !linux

package uring

import (
	"errors"

	"github.com/gocached/gocached/internal/reactor"
)

// New fails: io_uring is Linux only.
func New(reactor.Config) (reactor.Engine, error) {
	return nil, errors.New("uring: io_uring needs Linux; use --engine=go")
}

// Available says why the engine cannot run here.
func Available() error { return errors.New("uring: io_uring needs Linux; use --engine=go") }
