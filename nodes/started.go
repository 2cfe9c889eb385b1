package nodes

import "github.com/multi-launcher/multi/internal/proc"

// Started names the process a record says runs its node: its pid and its
// start time in clock ticks since boot (/proc/PID/stat's starttime), which together
// name one process for the life of the machine, unless the pid is reused
// within the tick the process started in; and, where the kernel has pidfs
// (Linux 6.9+), the inode number of a pidfd of it, which names that one
// process for the whole boot and is never given to another. Zero when the
// node has not started yet (the record is written before it starts), and
// when read in another pid namespace than the record's writer.
type Started struct {
	PID        int
	StartTicks uint64
	// PidfdIno is 0 where the kernel gives pidfds no inode of their own.
	PidfdIno uint64
}

// started is the process r names, zero if none. A pid written in another
// pid namespace (a rundir shared with a container) names no process here.
func (r record) started() Started {
	if r.PID <= 0 || r.StartTicks == 0 {
		return Started{}
	}
	if r.PidNS != 0 && r.PidNS != proc.PidNamespace() {
		return Started{}
	}
	return Started{PID: r.PID, StartTicks: r.StartTicks, PidfdIno: r.PidfdIno}
}
