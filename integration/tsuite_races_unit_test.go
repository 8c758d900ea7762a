package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRerunRacesOnlyOnTheirSignature: a file that lost a listed race runs
// again and its new result replaces the old; a failure with any other
// stderr is left as it was.
func TestRerunRacesOnlyOnTheirSignature(t *testing.T) {
	requireTool(t, "perl")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	pass := "print \"1..1\\nok 1 - fine\\n\";\n"
	if err := os.WriteFile(filepath.Join(dir, "t", "binary.t"), []byte(pass), 0o644); err != nil {
		t.Fatal(err)
	}
	lost := func(stderr string) *tapResult {
		return &tapResult{file: "binary.t", ran: 3, exitCode: 255, stderr: stderr}
	}
	results := map[string]*tapResult{"binary.t": lost("Memcache Error (1): Not found")}
	rerunRaces(context.Background(), t, dir, results, nil)
	if r := results["binary.t"]; !r.complete() || len(r.failed) != 0 {
		t.Fatalf("after the race's signature, binary.t was not run again: %s", r.summary())
	}
	other := lost("Memcache Error (5): something else")
	results = map[string]*tapResult{"binary.t": other}
	rerunRaces(context.Background(), t, dir, results, nil)
	if results["binary.t"] != other {
		t.Fatal("binary.t ran again after a failure that is not the race's")
	}
}

// TestRerunRacesPortTaken: the port race is no one file's: any file whose
// server could not listen, or listened on IPv6 alone, runs again.
func TestRerunRacesPortTaken(t *testing.T) {
	requireTool(t, "perl")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	pass := "print \"1..1\\nok 1 - fine\\n\";\n"
	if err := os.WriteFile(filepath.Join(dir, "t", "lru-maintainer.t"), []byte(pass), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, stderr := range []string{
		"failed to listen on one of interface(s) 127.0.0.1: Address already in use\n",
		// IPv4's port held by a client connection: the server listens on IPv6 alone.
		"Failed to startup/connect to memcached server. at t/lib/MemcachedTest.pm line 419.\n",
	} {
		results := map[string]*tapResult{"lru-maintainer.t": {file: "lru-maintainer.t", exitCode: 10, stderr: stderr}}
		rerunRaces(context.Background(), t, dir, results, nil)
		if r := results["lru-maintainer.t"]; !r.complete() || len(r.failed) != 0 {
			t.Fatalf("after %q, lru-maintainer.t was not run again: %s", stderr, r.summary())
		}
	}
}
