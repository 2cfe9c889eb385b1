package testutil

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadPID reads the pid a test's process wrote to path (one line), and
// fails the test if it is not a pid above 1.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("%s: %q is not a pid", path, b)
	}
	return pid
}

// KillAtCleanup pins process pid with a pidfd now and SIGKILLs it through
// that pidfd at the test's cleanup: that process or none, whatever the
// pid names by then. One already gone is nothing to kill.
func KillAtCleanup(t testing.TB, pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	t.Cleanup(func() {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
}
