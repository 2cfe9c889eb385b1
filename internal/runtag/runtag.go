// Package runtag names the files a foreground run (multi run) leaves in
// a rundir for each node it supervises, says what they hold, and tells
// whether the run one names is still alive. The run writes them; the
// verbs of other multi commands read and remove them.
package runtag

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
)

// Ext names the tag a run leaves in the rundir for each
// node it runs: RUNDIR/NAME.run. A stop, stopwait, kill or restart from
// another shell removes it before it signals the node, so when Run sees
// the node exit with its tag gone, the node was stopped on purpose and is
// not a failure. Removed before the signal, the tag is already gone when
// the exit is seen: no race with the exit, whatever the node's exit code
// (a celery worker exits 0 on TERM, another program 143).
const Ext = ".run"

// FatalExt names the mark a run leaves in the rundir for a node it gave
// up on (the crash-loop limit, multi run --max-restarts): RUNDIR/NAME.fatal,
// the run's id (as in its run tag) on its first line, the reason on the
// second. A status from another shell shows the node fatal while that
// run is alive; the run removes the mark as it ends.
const FatalExt = ".fatal"

// ID is what a run tag holds: the run's pid and, where /proc says, its
// start time in clock ticks, and where the kernel has pidfs its pidfd's
// inode, which name this run for the life of the machine. A start or
// restart from another shell refuses a node whose tag names a run still
// alive, and names its pid. The inode is what that check trusts first:
// a process's own view of its start time can be another's less one tick
// (qemu-user computes its own).
func ID() []byte {
	id := strconv.Itoa(os.Getpid())
	if st, err := pin.Identify(os.Getpid()); err == nil {
		id += " " + strconv.FormatUint(st.StartTicks, 10)
		if st.PidfdIno != 0 {
			id += " " + strconv.FormatUint(st.PidfdIno, 10)
		}
	}
	return []byte(id + "\n")
}

// Live is the pid of the run a run tag names ("PID STARTTICKS INO",
// see ID), 0 if it is not alive or is this process.
func Live(b []byte) int {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0
	}
	p, err := proc.Read(pid)
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
