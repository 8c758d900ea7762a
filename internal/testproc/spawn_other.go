//go:build !linux

package testproc

import "os/exec"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal; a killed test binary may leave its children running there.
func setParentDeathSignal(*exec.Cmd) {}

func spawn(start func() error) error { return start() }
