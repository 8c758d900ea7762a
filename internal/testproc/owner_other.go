//go:build !linux

package testproc

import "errors"

func holdsListenerFD(pid, port int) (bool, error) {
	return false, errors.ErrUnsupported
}
