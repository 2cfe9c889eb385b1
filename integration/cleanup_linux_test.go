package integration

import (
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// cleanup PID... pins each process with a pidfd now and SIGKILLs it
// through that pidfd when the script ends: for processes no lock names,
// such as a node's child, without the risk of killing a recycled pid.
func cmdCleanup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: cleanup pid...")
	}
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil || pid <= 1 || pid == os.Getpid() {
			ts.Fatalf("cleanup: bad pid %q", a)
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			ts.Fatalf("cleanup: pid %d: %v", pid, err)
		}
		ts.Defer(func() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
	}
}
