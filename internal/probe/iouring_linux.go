package probe

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioUringParams is struct io_uring_params (120 bytes); the probe only
// needs the kernel to accept a zeroed one.
type ioUringParams [120]byte

// IOURing probes what `--engine uring` needs: io_uring not disabled by
// kernel.io_uring_disabled, nor refused by seccomp or an old kernel. It sets
// up (and closes) a two-entry ring.
func IOURing() Result {
	r := Result{Feature: "io_uring"}
	if b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); err == nil {
		switch strings.TrimSpace(string(b)) {
		case "2":
			r.Sentence = "disabled by sysctl kernel.io_uring_disabled=2; --engine uring cannot start (set it to 0, or use --engine=epoll)"
			return r
		case "1":
			r.Sentence = "kernel.io_uring_disabled=1 limits io_uring to the io_uring_group; "
		}
	}
	var p ioUringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 2, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		r.Err = errno
		r.Sentence += "io_uring_setup failed (" + errno.Error() + "): --engine uring cannot start here; use --engine=epoll"
		return r
	}
	unix.Close(int(fd))
	r.Supported = true
	r.Sentence += "io_uring_setup works: --engine uring is available (NAPI busy polling needs Linux 6.9+, static NAPI tracking 6.13+)"
	return r
}
