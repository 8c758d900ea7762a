// Package refmc provides the reference memcached servers gocached is
// compared against: a release's source, fetched as the orig tarball of
// Debian's memcached source package through apt (the package registries are
// the only network the test machines reach), pinned by sha256, unpacked and
// built in a cache kept across runs.
//
// Two releases matter: the one Debian 12 ships (1.6.18, also the Debian
// package's binary) and the newest (1.6.45), whose behaviour gocached
// follows. Tests and benchmarks get the tree (for its t/ suite) or a built
// binary; a missing compiler or archive is an error the caller reports as a
// missing testbed, never a gocached failure.
package refmc

import (
	"os"
	"path/filepath"
)

// Release is one memcached release as Debian packages it.
type Release struct {
	Version string // "1.6.45"
	// Suites are the Debian suites whose deb-src indexes carry the
	// release; empty means the machine's own suites.
	Suites []string
	// OrigSHA256 pins the upstream tarball (the value in Debian's .dsc).
	OrigSHA256 string
}

// Debian12 is the release Debian 12 ships: /usr/bin/memcached on the test
// machines, and the t/ suite gocached was first made to pass.
var Debian12 = Release{
	Version:    "1.6.18",
	OrigSHA256: "35872bd25f8d29d7cc2072d23e74344530891bfd0aa4f4f64184a8ae7291164b",
}

// Current is the newest release, the behaviour gocached follows; only
// Debian's development suite has it.
var Current = Release{
	Version:    "1.6.45",
	Suites:     []string{"sid"},
	OrigSHA256: "c383a2ad8f973b627c3de472702f46ee33b402750de4fd2d25cef65a00140110",
}

func (r Release) origName() string { return "memcached_" + r.Version + ".orig.tar.xz" }

// CacheDir is where tarballs, trees and builds are kept across runs:
// GOCACHED_TSUITE_CACHE, else /var/cache/gocached-tests when writable (root,
// CI), else the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("GOCACHED_TSUITE_CACHE"); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	const system = "/var/cache/gocached-tests"
	if err := os.MkdirAll(system, 0o755); err == nil {
		if f, err := os.CreateTemp(system, ".probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return system, nil
		}
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	d = filepath.Join(d, "gocached-tests")
	return d, os.MkdirAll(d, 0o755)
}
