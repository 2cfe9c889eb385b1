package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// deepen makes the pipe to a node's log writer logPipeSize deep, so that
// a node writing as fast as it can waits on its writer less often. Only
// as root: the kernel counts an unprivileged user's pipe buffers
// (pipe-user-pages-soft), and past that count gives every new pipe of
// that user, its shell's too, a shallow buffer; root's are not counted.
func deepen(w *os.File) {
	if os.Geteuid() == 0 {
		unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, logPipeSize)
	}
}
