//go:build unix && !linux

package procctl

// asUserFiles runs fn as root where there is no setfsuid: what fn creates
// is handed to the user afterwards, and permissions are root's.
func asUserFiles(uid, gid int, fn func() error) error { return fn() }

// canCreateIn cannot check as the user here; root may create anywhere.
func canCreateIn(dir string) error { return nil }
