package supervise

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes"
)

// LiveRun is the pid of the run a run tag names ("PID STARTTICKS INO",
// see runID), 0 if it is not alive or is this process.
func LiveRun(b []byte) int {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0
	}
	p, err := nodes.ReadProc(pid)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return pid // no /proc: taken for alive
	case err != nil, p.Gone():
		return 0
	}
	if len(f) > 2 {
		// The pidfd's inode names one process for good; where the
		// kernel gives one, it decides.
		if ino, err := strconv.ParseUint(f[2], 10, 64); err == nil {
			if now, ok := pin.PidfdInoOf(pid); ok {
				if now != ino {
					return 0 // another process now has the pid
				}
				return pid
			}
		}
	}
	if len(f) > 1 && f[1] != strconv.FormatUint(p.StartTicks, 10) {
		return 0 // another process now has the pid
	}
	return pid
}
