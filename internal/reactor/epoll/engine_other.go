//go:build !linux

// Package epoll is gocached's Linux engine; elsewhere New refuses.
package epoll

import (
	"errors"

	"github.com/gocached/gocached/internal/reactor"
)

// New fails: the epoll reactors need Linux.
func New(reactor.Config) (reactor.Engine, error) {
	return nil, errors.New("epoll: the epoll engine needs Linux; use --engine=go")
}
