//go:build !linux

package reactor

import (
	"errors"

	"github.com/gocached/gocached/internal/protocol"
)

func newEpollEngine(cfg Config, env *protocol.Env) (Engine, error) {
	return nil, errors.New("reactor: the epoll engine needs Linux; use --engine=go")
}
