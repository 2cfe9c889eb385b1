package launch

import (
	"strconv"
	"testing"
)

// Root is spared RLIMIT_NPROC, but not the machine's pid_max: a start of
// many nodes (start 100000, a typo) stops short of the machine's last
// pids, keeping a tenth of them for everything else, instead of forking
// until no process anywhere can fork.
func TestTaskRoomKeepsTheMachinesPids(t *testing.T) {
	pidMax, err := strconv.Atoi(readTrim("/proc/sys/kernel/pid_max"))
	if err != nil || pidMax <= 0 {
		t.Skipf("no kernel.pid_max here: %v", err)
	}
	room, limit, ok := taskRoom()
	if !ok || room > pidMax-pidMax/10 {
		t.Fatalf("taskRoom: %d (%q, %v); want at most %d, nine tenths of kernel.pid_max %d", room, limit, ok, pidMax-pidMax/10, pidMax)
	}
}
