package reactor

import (
	"fmt"

	"github.com/gocached/gocached/internal/protocol"
)

func newEngine(name string, cfg Config, env *protocol.Env) (Engine, error) {
	switch name {
	case "epoll":
		return newEpollEngine(cfg, env)
	}
	return nil, fmt.Errorf("reactor: engine %q not implemented yet", name)
}
