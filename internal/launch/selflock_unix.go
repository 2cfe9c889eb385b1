//go:build unix

package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/pin"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// DefaultLockTimeout is how long Start waits for a self-locking node to
// take its lock when [Cluster.LockTimeout] is zero.
const DefaultLockTimeout = 10 * time.Second

// awaitOwnLock waits for a self-locking node (cmd, which has exec'd its
// command) to lock its pidfile and write its pid there: the holder must be
// the node's process or a process of its session (a wrapper script's child,
// say), and the file's text must name it, so that Status and pkill -F see
// the node as soon as Start returns. If the node exits
// first, or the timeout runs out, or ctx ends, or another instance takes
// the lock, the node is killed (it is this process's unreaped child, so its
// pid names no other process) and start fails with the reason: ctx's error
// when ctx ended. A node killed while it ran fails with a [*KilledError]
// that names its pid.
func awaitOwnLock(ctx context.Context, rp *Reaper, cmd *exec.Cmd, n nodes.Node, timeout time.Duration) (*os.Process, error) {
	pid := cmd.Process.Pid
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	deadline := time.Now().Add(timeout)
	delay := 100 * time.Microsecond
	giveUp := func(err error) (*os.Process, error) {
		if !exited(pid) {
			killChild(pid)
		}
		ws, werr := rp.waitChild(cmd)
		if werr == nil && err == nil {
			err = &ExitError{Status: ws, PID: cmd.Process.Pid, Err: fmt.Errorf("%w before taking its lock (%s; see %s)", ErrExitedAtOnce, DescribeExit(ws), n.LogFile)}
		}
		return nil, err
	}
	for {
		lockedBy := 0 // the holder seen, its pid not yet in the file
		info, err := pidfile.Inspect(n.PidFile)
		if err != nil {
			return giveUp(err)
		}
		if info.State == pidfile.Running && info.PID > 0 {
			sid, _ := unix.Getsid(info.PID)
			if info.PID != pid && sid != pid {
				return giveUp(&pidfile.HeldError{Path: n.PidFile, PID: info.PID})
			}
			// The lock comes before the pid is written: wait for both.
			if info.FilePID == info.PID {
				return cmd.Process, nil
			}
			lockedBy = info.PID
		}
		if h := testhooks.SelfLockUnheld; lockedBy == 0 && h != nil {
			h(pid)
		}
		if exited(pid) {
			// Another instance's lock is why a node exits at once in a
			// race of starts (OwnFromEnv's ErrAlreadyRunning): already
			// running, not a failure.
			if h := otherHolder(n, pid); h != nil {
				return giveUp(h)
			}
			return giveUp(nil)
		}
		if time.Now().After(deadline) && lockedBy != 0 {
			return giveUp(&KilledError{PID: pid, Err: fmt.Errorf("%w: pid %d locked it but did not write its pid there within %s (see %s); killed it (pid %d)",
				ErrNoLock, lockedBy, timeout, n.LogFile, pid)})
		}
		if time.Now().After(deadline) {
			return giveUp(&KilledError{PID: pid, Err: fmt.Errorf("%w within %s (it must lock $%s; see %s); killed it (pid %d)",
				ErrNoLock, timeout, pidfile.EnvPidfile, n.LogFile, pid)})
		}
		// The caller's deadline or cancel ends the wait at once, not at
		// the lock timeout.
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return giveUp(&KilledError{PID: pid, Err: fmt.Errorf("%w; it had not locked its pidfile (see %s); killed it (pid %d)",
				ctx.Err(), n.LogFile, pid)})
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// otherHolder returns a [*pidfile.HeldError] when n's lock is held by a
// process that is neither pid nor of its session: another instance.
func otherHolder(n nodes.Node, pid int) error {
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running || info.PID <= 0 || info.PID == pid {
		return nil
	}
	if sid, _ := unix.Getsid(info.PID); sid == pid {
		return nil
	}
	return &pidfile.HeldError{Path: n.PidFile, PID: info.PID}
}

// killChild SIGKILLs this process's own unreaped child pid (so the pid
// names no other process) and its whole session's group, which it leads
// from the exec step's setsid: what it forked goes too.
func killChild(pid int) {
	p, err := pin.CheckPID(pid)
	if err != nil {
		return
	}
	if g, err := pin.CheckGroupLeader(p); err == nil {
		pin.KillGroup(g, syscall.SIGKILL)
		return
	}
	pin.KillPID(p, syscall.SIGKILL)
}
