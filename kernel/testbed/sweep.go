//go:build linux

package testbed

import (
	"errors"
	"os"
	"regexp"
	"strconv"
)

var staleName = regexp.MustCompile(`^` + NamePrefix + `([0-9]+)-[0-9a-f]+-(srv|cli)$`)

// staleNamespaces picks, from namespace names, those of generated beds whose
// creating pid is not alive.
func staleNamespaces(names []string, alive func(pid int) bool) []string {
	var out []string
	for _, n := range names {
		m := staleName.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func pidAlive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// Sweep deletes namespaces of generated beds (gct-PID-RANDOM) whose process
// is gone: what a killed test run left behind. Beds of live processes and
// beds with other names are never touched.
func Sweep() error {
	entries, err := os.ReadDir("/var/run/netns")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	var errs []error
	for _, ns := range staleNamespaces(names, pidAlive) {
		if err := run("ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
