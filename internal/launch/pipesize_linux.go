package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// deepen asks for a pipe of logPipeSize bytes: a node writing as fast
// as it can then waits on its log writer less often (the system's
// pipe-max-size bounds what it gets).
func deepen(w *os.File) { unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, logPipeSize) }
