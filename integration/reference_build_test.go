package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
)

// TestReferenceBuild makes what the other areas compare against: memcached
// 1.6.45 built from Debian's source package (with TLS and SASL, as Debian
// builds it), the same built with its proxy, and the trees of both t/
// suites. test.sh runs it before the
// stages, which then find everything in the test cache instead of waiting
// on one another's build.
func TestReferenceBuild(t *testing.T) {
	bin := referenceMemcached(t)
	out, err := testproc.Command(bin, "-V").Output()
	if want := "memcached " + refmc.Current.Version + "\n"; err != nil || string(out) != want {
		t.Errorf("%s -V: %q (%v), want %q", bin, out, err, want)
	}
	help, err := testproc.Command(bin, "-h").Output()
	if err != nil {
		t.Fatalf("%s -h: %v", bin, err)
	}
	for _, feature := range []string{"enable-ssl", "enable-sasl"} {
		if !strings.Contains(string(help), feature) {
			t.Errorf("%s -h does not offer %s: not built as Debian builds it", bin, feature)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), referenceBuildLimit)
	defer cancel()
	for _, r := range []refmc.Release{refmc.Current, refmc.Debian12} {
		if _, err := r.Tree(ctx); err != nil {
			missing(t, "memcached %s's t/ suite is not available: %v", r.Version, err)
		}
	}
	// The proxy the clients area puts in front of three servers
	// (TestMemcachedProxy).
	if _, err := refmc.Current.ProxyBinary(ctx); err != nil {
		missing(t, "memcached %s with its proxy not built: %v", refmc.Current.Version, err)
	}
}
