// Package metrics serves gocached's statistics to Prometheus: an opt-in
// HTTP endpoint (`--metrics-listen ADDR`) with /metrics and /healthz.
//
// The collector reads the server through a Source on every scrape: the same
// renderers as the text protocol's `stats`, `stats settings`, `stats items`,
// `stats slabs` and `stats reactors`, so a metric and the stat it comes from
// cannot disagree. What `stats` holds is exposed under memcached_exporter's
// metric names and labels (memcached_commands_total{command,status},
// memcached_current_connections, memcached_slab_*{slab}, ...), so existing
// dashboards and alerts work unchanged; gocached's own mechanism, the
// epoll reactors and the NAPI knobs of `stats reactors`, is exposed as
// gocached_reactor_*{reactor} and gocached_napi_*{napi_id}, plus the
// kernel's busy-poll packet counter. Go runtime and process metrics come
// with the client library's standard collectors.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrUnknownGroup is what a Source returns for a stats group the server
// does not have (`stats reactors` on the portable engine): the metrics of
// that group are left out, and the scrape still succeeds.
var ErrUnknownGroup = errors.New("unknown stats group")

// Source is the server as the collector sees it.
type Source interface {
	// Stats returns the lines of `stats` (group "") or `stats GROUP`
	// ("settings", "items", "slabs", "reactors") as name → value, exactly
	// as the text protocol prints them without the "STAT " prefix.
	Stats(group string) (map[string]string, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(group string) (map[string]string, error)

// Stats calls f.
func (f SourceFunc) Stats(group string) (map[string]string, error) { return f(group) }

// Registry returns a registry holding the collector over src and the Go
// runtime and process collectors.
func Registry(src Source) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(src),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves /metrics (the Prometheus text and protobuf formats) and
// /healthz (200 "ok" while src answers `stats`, else 503) for src.
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry(src), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Timeout:       10 * time.Second,
	}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if _, err := src.Stats(""); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("unhealthy: " + err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>gocached</title></head><body>` +
			`<a href="/metrics">/metrics</a> <a href="/healthz">/healthz</a></body></html>` + "\n"))
	})
	return mux
}

// shutdownTimeout bounds how long Serve waits for scrapes in flight once
// its context ends.
const shutdownTimeout = 5 * time.Second

// Serve listens on addr and serves Handler(src) until ctx ends; it returns
// nil then, or the error that stopped it sooner (such as a failed bind).
func Serve(ctx context.Context, addr string, src Source) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, l, src)
}

// ServeListener is Serve on a listener the caller bound, so that a bind
// error can stop the server at startup; it closes l.
func ServeListener(ctx context.Context, l net.Listener, src Source) error {
	srv := &http.Server{
		Handler:           Handler(src),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
