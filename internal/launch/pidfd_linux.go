package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// openPidfd is a pidfd of pid, nil where the kernel has none.
func openPidfd(pid int) *os.File {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "pidfd")
}
