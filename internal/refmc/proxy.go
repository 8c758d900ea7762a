package refmc

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
)

// ProxyBinary returns r's memcached built with its proxy (--enable-proxy),
// for putting in front of gocached servers. It is a build of its own, kept
// apart from Binary's: the proxy links the Lua interpreter and the route
// library the tarball vendors (vendor/lua, vendor/routelib).
func (r Release) ProxyBinary(ctx context.Context) (string, error) {
	tree, err := r.prepared(ctx, "memcached-"+r.Version+"-proxy-build", func(src string) error {
		if err := run(ctx, src, "./configure", "--enable-proxy", "--enable-sasl", "--enable-tls"); err != nil {
			return err
		}
		jobs := "-j" + strconv.Itoa(runtime.NumCPU())
		// The memcached target links vendor/lua's library without making
		// it: only "make all" descends into vendor/.
		if err := run(ctx, src, "make", jobs, "-C", "vendor"); err != nil {
			return err
		}
		return run(ctx, src, "make", jobs, "memcached")
	}, "memcached")
	if err != nil {
		return "", err
	}
	return filepath.Join(tree, "memcached"), nil
}
