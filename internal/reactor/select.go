package reactor

import (
	"fmt"

	"github.com/gocached/gocached/internal/protocol"
)

// newEngine builds the engine called name. Both engines set env.Server to
// themselves before returning, so Sessions can report engine stats.
func newEngine(name string, cfg Config, env *protocol.Env) (Engine, error) {
	switch name {
	case "go":
		return newGoEngine(cfg, env)
	case "epoll":
		return newEpollEngine(cfg, env)
	}
	return nil, fmt.Errorf("reactor: unknown engine %q (want \"go\" or \"epoll\")", name)
}
