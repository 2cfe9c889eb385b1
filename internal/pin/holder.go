package pin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
)

// ErrHolderMismatch: the node's pidfile is locked, but not by the process
// the node's record names (the pidfile was replaced, say by another
// node's); nothing is signalled. See [HolderError].
var ErrHolderMismatch = errors.New("the lock holder is not the process the node's record names")

// A HolderError reports a node whose pidfile is locked by a process other
// than the one its record names: the holder's pid, pinned, is not the
// recorded one, or has another start time, or (where the kernel has pidfs)
// another pidfd inode. A node is its lock holder and its record together;
// a holder the record does not name is not signalled.
type HolderError struct {
	Node    string
	PidFile string
	// PID and Started: the lock holder, as this pid namespace names it.
	PID     int
	Started time.Time
	// Recorded is the process the node's record names.
	Recorded nodes.Started
}

func (e *HolderError) Error() string {
	return fmt.Sprintf("pidfile %s is locked by pid %d%s, not by pid %d%s that the record of %s names; not signalled (was the pidfile replaced?)",
		e.PidFile, e.PID, startedText(e.Started), e.Recorded.PID,
		startedText(proc.Stat{StartTicks: e.Recorded.StartTicks}.Start()), e.Node)
}

// Is makes errors.Is(err, ErrHolderMismatch) true.
func (e *HolderError) Is(target error) bool { return target == ErrHolderMismatch }

func startedText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " (started " + t.Format(time.DateTime) + ")"
}

// NewHolderError reports that pid, the lock holder, is not want.
func NewHolderError(pid int, want nodes.Started) *HolderError {
	e := &HolderError{PID: pid, Recorded: want}
	if p, err := proc.Read(pid); err == nil {
		e.Started = p.Start()
	}
	return e
}

// ProcIs reports whether pid, with the start time /proc gives it, is the
// process want names: the check where no pidfd inode can be compared.
// Where /proc cannot be read for start times, the pid alone.
func ProcIs(pid int, want nodes.Started) bool {
	if pid != want.PID {
		return false
	}
	p, err := proc.Read(pid)
	if errors.Is(err, errors.ErrUnsupported) {
		return true
	}
	return err == nil && p.StartTicks == want.StartTicks
}

// ExitGrace is how long a process that has released its node's lock (and
// removed its pidfile), and has not begun to exit, is given to exit before
// it is called lost: a self-locking node releases its lock and then exits
// (Lock.Release, then os.Exit), a moment apart.
const ExitGrace = time.Second

// WaitOnItsWay waits for process st (read as p), which has let go of its
// node's lock, to exit: up to ExitGrace if it released the lock cleanly
// (released: its pidfile removed, as Lock.Release does), or up to
// exitingWait once it has begun to exit (PF_EXITING), while ctx lasts. It
// reports whether it exited (a zombie has). One that is neither (its
// pidfile left stale, the lock dropped while it runs) is not waited for.
func WaitOnItsWay(ctx context.Context, st nodes.Started, p proc.Stat, released bool, exitingWait time.Duration) bool {
	var wait time.Duration
	if released {
		wait = ExitGrace
	}
	if p.Exiting() {
		wait = max(wait, exitingWait)
	}
	if wait == 0 {
		return false
	}
	if h := testhooks.OnItsWay; h != nil {
		h(st.PID)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return WaitLost(wctx, st) == nil
}

// ErrNoPidfd: a lost process is signalled only through a pidfd, pinned
// before its start time is checked; without pidfds it is not signalled.
var ErrNoPidfd = errors.New("no pidfd to pin the lost process with (not signalled)")

// GoneWait bounds how long Restart waits, after a node's lock is released,
// for the process it signalled to be gone before it starts the node again.
const GoneWait = 5 * time.Second
