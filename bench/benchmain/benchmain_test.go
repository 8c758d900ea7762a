package benchmain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

func TestMain(m *testing.M) { testproc.VerifyMain(m) }

// TestEnvScratchAndContext: Close ends the context and removes the scratch
// directory with what was built into it.
func TestEnvScratchAndContext(t *testing.T) {
	env, err := Start("benchmain-test")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(env.Dir, "gocached")
	if err := os.WriteFile(f, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	env.Close()
	if env.Ctx.Err() == nil {
		t.Error("context still live after Close")
	}
	if _, err := os.Stat(env.Dir); !os.IsNotExist(err) {
		t.Errorf("scratch directory %s left behind: %v", env.Dir, err)
	}
}

// TestBuildKeepsGivenBinary: a binary the user named is used as given, not
// rebuilt over (it may be a different commit on purpose).
func TestBuildKeepsGivenBinary(t *testing.T) {
	env, err := Start("benchmain-test")
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	bin := "/usr/local/bin/given"
	if err := env.Build(&bin, "github.com/gocached/gocached/no/such/package"); err != nil {
		t.Fatalf("Build with a binary given: %v", err)
	}
	if bin != "/usr/local/bin/given" {
		t.Errorf("binary replaced by %s", bin)
	}
	if err := env.Memcached(&bin); err != nil || bin != "/usr/local/bin/given" {
		t.Errorf("Memcached with a binary given: %q, %v", bin, err)
	}
}

// TestBuildBuildsWhenMissing: with no binary given, the package is built
// into the scratch directory (a failing build says so).
func TestBuildBuildsWhenMissing(t *testing.T) {
	env, err := Start("benchmain-test")
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	var bin string
	if err := env.Build(&bin, "github.com/gocached/gocached/no/such/package"); err == nil {
		t.Fatal("building a package that does not exist succeeded")
	}
	if filepath.Dir(bin) != env.Dir {
		t.Errorf("binary path %s not in the scratch directory %s", bin, env.Dir)
	}
}
