//go:build linux

package reactor

import (
	"errors"

	"github.com/gocached/gocached/internal/protocol"
)

// newEpollEngine is replaced by the epoll reactors (issue 3).
func newEpollEngine(cfg Config, env *protocol.Env) (Engine, error) {
	return nil, errors.New("reactor: epoll engine not implemented yet")
}
