// Package launch starts a node: every way a node's process comes to hold
// its pidfile's lock. A node starts through the exec step: the program
// that links this package is re-executed as the node's own process, which
// locks the pidfile, writes its pid, points its output at the logfile and
// execs the node's command with the locked descriptor left open, so that
// the lock lasts as long as the node and dies with it (package
// nodes/pidfile). A failure before the exec comes back through a
// close-on-exec pipe, so [Spawn] returns only once the node runs holding
// its lock, or has failed with a reason.
//
// The step runs from this package's init function: a process started as
// a node's step (marked by an environment variable it removes again) plays
// the step and never returns to the program's main. Only the init
// functions of the packages this one imports run before it.
//
// A [Reaper] is the one waiter of a foreground run: the supervisor makes
// one and hands it to every Spawn, so that no child's status is stolen;
// without one (nil) each child is waited for on its own.
package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

var (
	// ErrCommandNotFound: the node's program does not exist (not in $PATH,
	// or no such file). It matches exec.ErrNotFound too.
	ErrCommandNotFound error = notFound{}
	// ErrCommandNotExecutable: the node's program exists but cannot be
	// executed (no permission, not a program).
	ErrCommandNotExecutable = errors.New("command not executable")
)

// notFound is ErrCommandNotFound: its own value, which errors.Is also
// takes for exec.ErrNotFound, as os/exec's callers test it.
type notFound struct{}

func (notFound) Error() string { return "command not found" }

// Is makes errors.Is(err, exec.ErrNotFound) true.
func (notFound) Is(target error) bool { return target == exec.ErrNotFound }

// An ExitError is a node's process that ended, with how; PID is the
// process, 0 where it is not known.
type ExitError struct {
	Status syscall.WaitStatus
	PID    int
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the status as tini reports it.
func (e *ExitError) ExitCode() int { return ExitCode(e.Status) }

// ExitCode is a process's end as a shell or tini reports it: its exit
// code, or 128 plus the signal that killed it.
func ExitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// ErrExitCode is the exit code a failed start of a node gives [Cluster.Run]:
// the node's own (or 128+signal) when its command exited at once, 127 when
// the program does not exist, 126 when it cannot be executed, else 1.
func ErrExitCode(err error) int {
	var ec interface{ ExitCode() int }
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return ec.ExitCode()
	case errors.Is(err, ErrCommandNotFound):
		return 127
	case errors.Is(err, ErrCommandNotExecutable):
		return 126
	}
	return 1
}

// Errors of a start, which callers test with [errors.Is].
var (
	// ErrExitedAtOnce: the node's command exited before start could see it
	// holding its lock.
	ErrExitedAtOnce = errors.New("exited at once")
	// ErrNoLock: a self-locking node did not take its lock, or did not
	// write its pid in the pidfile it locked, in time.
	ErrNoLock = errors.New("did not lock its pidfile")
	// ErrRanTooLong: a node run to its end ([Child.Wait]) did not end in
	// time.
	ErrRanTooLong = errors.New("still running")
)

// A KilledError is a start that failed and killed the node it had
// started, PID.
type KilledError struct {
	PID int
	Err error
}

func (e *KilledError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *KilledError) Unwrap() error { return e.Err }

// A Child is a node this process has started and not yet let go of.
type Child struct {
	node nodes.Node
	cmd  *exec.Cmd
	pid  int
	born time.Time
	// bornTicks is the boot clock (in [proc.Stat.StartTicks]' unit) read
	// before the spawn: no process of the child's tree started earlier.
	bornTicks uint64
	// logOff is the logfile's size before the node started: its own
	// lines come after; -1 if unknown.
	logOff int64
	// logDone is closed when the node's log writer has exited; nil
	// without one.
	logDone chan struct{}
	rp      *Reaper // the supervisor's, or nil
	// readyR is the read end of an fd:N check's pipe, or nil; readyW
	// its write end, until the step has its own.
	readyR, readyW *os.File
}

// ReadyPipe is the read end of the child's readiness pipe (fd:N), nil
// for another check. The caller closes it.
func (ch *Child) ReadyPipe() *os.File { return ch.readyR }

// PID is the child's pid: its node's process, once it runs its command.
func (ch *Child) PID() int { return ch.pid }

// Born is when the child was started.
func (ch *Child) Born() time.Time { return ch.born }

// DescribeExit says how a process ended: "exit status 3", "killed by KILL".
func DescribeExit(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + pin.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// cgroupLeft names (pid and command) and kills what is left in the
// node's cgroup at path, made for this start; "" if nothing is.
func cgroupLeft(path string) string {
	var names []string
	pids, err := cgroup.KillMade(path)
	for _, pid := range pids {
		if p, err := proc.Read(pid); err == nil && p.Comm != "" {
			names = append(names, fmt.Sprintf("pid %d (%s)", pid, p.Comm))
		} else {
			names = append(names, fmt.Sprintf("pid %d", pid))
		}
	}
	s := strings.Join(names, ", ")
	if err != nil {
		s += fmt.Sprintf(" (not killed: %v)", err)
	}
	return s
}

// RetryFDs runs f, and again while it fails for want of a descriptor
// and another operation of this process holds some it will give back
// ([fdwait.Retry]).
func RetryFDs(f func() error) error { return fdwait.Retry(f, nil) }
