//go:build !linux

package bench

import (
	"context"
	"errors"
)

const (
	defaultEngine = EngineGo
	haveEpoll     = false
)

func runEpoll(context.Context, *Config, *KeySpace, *Result) error {
	return errors.New("the epoll engine needs Linux")
}
