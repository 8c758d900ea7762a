//go:build !linux

package procctl

import "errors"

// capKeeper keeps CAP_NET_ADMIN across -u on Linux; elsewhere there are no
// NAPI knobs to restore.
type capKeeper struct{}

func startCapKeeper() (*capKeeper, error) {
	return nil, errors.New("keeping a capability across -u needs Linux")
}

func (k *capKeeper) do(fn func() error) error { return fn() }

func (k *capKeeper) keepOnlyNetAdmin() error { return nil }
