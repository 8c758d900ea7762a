package integration

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// tsuiteFixedPaths names the t/ files that use something fixed which every
// run of the suite shares, and a lock path for it, so that runs against
// several engines, in separate test binaries side by side, take turns at
// those files while everything else runs at once:
//   - binary-sasl.t builds its sasldb at one name in /tmp and unlinks it;
//   - issue_67.t starts servers on fixed ports (memcached's default 11211
//     when it is free, 11212, 11222, ...), seen colliding with itself in
//     another run ("Address already in use").
var tsuiteFixedPaths = map[string]string{
	"binary-sasl.t": "/tmp/test-memcached.sasldb",
	"issue_67.t":    "/tmp/test-memcached.fixed-ports",
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
