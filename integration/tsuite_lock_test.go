package integration

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// tsuiteFixedPaths names the t/ files that use a fixed path every run of
// the suite shares (binary-sasl.t builds its sasldb at one name in /tmp and
// unlinks it when done), so that runs against several engines, in separate
// test binaries side by side, can take turns at that file while everything
// else runs at once.
var tsuiteFixedPaths = map[string]string{
	"binary-sasl.t": "/tmp/test-memcached.sasldb",
}

// lockFixedPath waits (as long as ctx allows) for an exclusive lock beside
// path, shared by every process on the machine, and returns its release.
func lockFixedPath(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("lock %s.lock: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s.lock: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
