package refmc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/gocached/gocached/internal/testproc"
)

// Tree returns r's unpacked source tree with timedrun (the t/ suite's
// watchdog) built in it, fetching what the cache lacks. The t/ runner
// writes its own memcached-debug into it, so a built server lives apart
// (Binary).
func (r Release) Tree(ctx context.Context) (string, error) {
	return r.prepared(ctx, "memcached-"+r.Version, func(src string) error {
		return run(ctx, src, compiler(), "-O2", "-o", "timedrun", "timedrun.c")
	}, "timedrun")
}

// Binary returns r's memcached built from source (with SASL and TLS, as
// Debian builds it), building it once per cache.
func (r Release) Binary(ctx context.Context) (string, error) {
	tree, err := r.prepared(ctx, "memcached-"+r.Version+"-build", func(src string) error {
		if err := run(ctx, src, "./configure", "--enable-sasl", "--enable-tls"); err != nil {
			return err
		}
		return run(ctx, src, "make", "-j"+strconv.Itoa(runtime.NumCPU()), "memcached")
	}, "memcached")
	if err != nil {
		return "", err
	}
	return filepath.Join(tree, "memcached"), nil
}

// prepared returns cache/name, made by unpacking the orig tarball and
// running build in it unless it already holds done. Work happens beside
// the final place and is renamed into it, so an interrupted run never
// leaves a half tree that later runs would trust; a lock on the cache
// keeps concurrent test binaries from doing it twice.
func (r Release) prepared(ctx context.Context, name string, build func(src string) error, done string) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // (closing releases the lock)
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	final := filepath.Join(cache, name)
	if _, err := os.Stat(filepath.Join(final, done)); err == nil {
		return final, nil
	}
	tarball, err := r.fetchOrig(ctx, cache)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, "unpack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := run(ctx, tmp, "tar", "-xJf", tarball); err != nil {
		return "", err
	}
	src := filepath.Join(tmp, "memcached-"+r.Version)
	if err := build(src); err != nil {
		return "", fmt.Errorf("memcached %s: %w", r.Version, err)
	}
	os.RemoveAll(final)
	if err := os.Rename(src, final); err != nil {
		return "", err
	}
	return final, nil
}

func compiler() string {
	if _, err := exec.LookPath("cc"); err == nil {
		return "cc"
	}
	return "gcc"
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := testproc.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return nil
}
