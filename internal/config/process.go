package config

// Process is memcached's process-level flags: who to become, where the
// pid goes, whether to leave the terminal, lock memory, dump core.
type Process struct {
	User      string // -u: identity to assume after setup, when started as root
	PidFile   string // -P: where to write the pid
	Daemon    bool   // -d: run in the background
	LockMem   bool   // -k: mlockall
	CoreDumps bool   // -r: raise the core file limit to its maximum
}
