package integration

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// memcached's own test suite (t/*.t, its perl library and timedrun.c) comes
// from the release tarball of 1.6.18. Debian 12 ships exactly that release,
// so the tarball is fetched as the orig tarball of Debian's memcached source
// package, through apt with the machine's own mirrors: the only network these
// machines reach is the package registries. It is pinned by its sha256 (the
// value in Debian's .dsc), so a different or altered upstream tree fails
// loudly instead of silently changing what the test asserts.
const (
	tsuiteVersion = "1.6.18"
	tsuiteOrig    = "memcached_" + tsuiteVersion + ".orig.tar.xz"
	tsuiteSHA256  = "35872bd25f8d29d7cc2072d23e74344530891bfd0aa4f4f64184a8ae7291164b"
)

// tsuiteCacheDir is where the tarball, its unpacked tree and the built
// timedrun are kept across runs: GOCACHED_TSUITE_CACHE, else
// /var/cache/gocached-tests when writable (root, CI), else the user's cache.
func tsuiteCacheDir() (string, error) {
	if d := os.Getenv("GOCACHED_TSUITE_CACHE"); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	if err := os.MkdirAll("/var/cache/gocached-tests", 0o755); err == nil {
		if f, err := os.CreateTemp("/var/cache/gocached-tests", ".probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/var/cache/gocached-tests", nil
		}
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	d = filepath.Join(d, "gocached-tests")
	return d, os.MkdirAll(d, 0o755)
}

// tsuiteSource returns the unpacked memcached-1.6.18 tree with timedrun
// built in it, fetching and building what the cache lacks. Errors mean the
// testbed is missing something (network, apt, tar, cc), not a gocached bug.
func tsuiteSource(ctx context.Context) (string, error) {
	cache, err := tsuiteCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w", err)
	}
	// test.sh runs the suite's plain and TLS modes side by side, each its
	// own test binary: one fetches and unpacks while the other waits.
	lock, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // (closing releases the lock)
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	tree := filepath.Join(cache, "memcached-"+tsuiteVersion)
	if _, err := os.Stat(filepath.Join(tree, "timedrun")); err == nil {
		return tree, nil
	}
	tarball := filepath.Join(cache, tsuiteOrig)
	if sum, err := fileSHA256(tarball); err != nil || sum != tsuiteSHA256 {
		if err := aptFetchOrig(ctx, cache); err != nil {
			return "", err
		}
		if sum, err := fileSHA256(tarball); err != nil || sum != tsuiteSHA256 {
			return "", fmt.Errorf("%s: sha256 %s, want %s (%v)", tarball, sum, tsuiteSHA256, err)
		}
	}
	// Unpack beside the final place and rename, so an interrupted run never
	// leaves a half tree that later runs would trust.
	tmp, err := os.MkdirTemp(cache, "unpack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := testproc.CommandContext(ctx, "tar", "-xJf", tarball, "-C", tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar -xJf %s: %v\n%s", tarball, err, out)
	}
	src := filepath.Join(tmp, "memcached-"+tsuiteVersion)
	cc := "cc"
	if _, err := exec.LookPath(cc); err != nil {
		cc = "gcc"
	}
	build := testproc.CommandContext(ctx, cc, "-O2", "-o", "timedrun", "timedrun.c")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building timedrun: %v\n%s", err, out)
	}
	os.RemoveAll(tree)
	if err := os.Rename(src, tree); err != nil {
		return "", err
	}
	return tree, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// aptFetchOrig downloads Debian's memcached source package into cache with
// apt-get source --download-only. apt runs on private lists and a private
// deb-src list derived from the machine's deb entries, so the system's apt
// configuration and state are left untouched.
func aptFetchOrig(ctx context.Context, cache string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("apt-get not found: %w", err)
	}
	base := filepath.Join(cache, "apt")
	for _, d := range []string{"lists/partial", "cache/archives/partial", "parts"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			return err
		}
	}
	srcs, err := debSrcEntries()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(base, "parts", "debian-src.sources"), []byte(srcs), 0o644); err != nil {
		return err
	}
	opts := []string{
		"-o", "Dir::Etc::SourceList=/dev/null",
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(base, "parts"),
		"-o", "Dir::State::Lists=" + filepath.Join(base, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(base, "cache"),
		"-o", "APT::Sandbox::User=root",
		"-q",
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	run := func(args ...string) error {
		cmd := testproc.CommandContext(ctx, "apt-get", append(append([]string(nil), opts...), args...)...)
		cmd.Dir = cache
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("update"); err != nil {
		return err
	}
	return run("source", "--download-only", "memcached")
}

// debSrcEntries turns the machine's Debian "deb" sources (deb822 .sources
// files and one-line sources.list entries) into deb-src stanzas.
func debSrcEntries() (string, error) {
	var b strings.Builder
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, stanza := range strings.Split(string(data), "\n\n") {
			fields := map[string]string{}
			for _, line := range strings.Split(stanza, "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
					fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			if !strings.Contains(" "+fields["Types"]+" ", " deb ") || fields["URIs"] == "" {
				continue
			}
			// Only Debian's own archive: a third-party repository usually
			// has no source indexes, and apt-get update would fail on it.
			if k := fields["Signed-By"]; k != "" && !strings.Contains(k, "debian-archive") {
				continue
			}
			fmt.Fprintf(&b, "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", fields["URIs"], fields["Suites"], fields["Components"])
			if k := fields["Signed-By"]; k != "" {
				fmt.Fprintf(&b, "Signed-By: %s\n", k)
			}
			b.WriteString("\n")
		}
	}
	if f, err := os.Open("/etc/apt/sources.list"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			w := strings.Fields(sc.Text())
			if len(w) < 4 || w[0] != "deb" || strings.HasPrefix(w[1], "[") || !strings.Contains(w[1], "debian") {
				continue
			}
			fmt.Fprintf(&b, "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n", w[1], w[2], strings.Join(w[3:], " "))
		}
		f.Close()
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no Debian deb sources in /etc/apt to derive deb-src entries from")
	}
	return b.String(), nil
}
