package flash

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropFileCache writes back and evicts the ext_path file's pages from the
// page cache, so that the first read of a flash value reaches the device
// rather than memory the kernel kept from the write. Only this file's
// pages: nothing else on the machine is touched. A missing file (a server
// without a flash tier) is nothing to drop.
func dropFileCache(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", path, err)
	}
	return nil
}

// fileBlocks is the disk space path holds (a sparse file holds only what
// was written); 0 when it does not exist.
func fileBlocks(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
