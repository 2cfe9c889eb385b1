package multi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A startTx is one node's start, from its record lock to its process
// recorded, as a transaction: it knows what it changed (the record, the
// cgroup folder) and puts back just that when the start fails.
//
// The record is written before the node starts, so that no node runs
// unrecorded: not when the rundir cannot be written (nothing starts), and
// not when a start is killed half way (the next start finds the node
// running, recorded); not when ctx has ended already (nothing is
// written). A start that fails puts back the record that was there
// before, or removes its own; one that finds the node already running
// keeps the running node's record.
type startTx struct {
	c      *call
	r      *Result
	n      nodes.Node
	rundir string
	lk     *record.Locked // the record lock, held from begin to the spawn's end
	// prev is the record there was (hasPrev), its process and readiness.
	prev        nodes.Node
	prevStarted nodes.Started
	prevReady   record.Readiness
	hasPrev     bool
	// same: the record said this already, naming no process, and was
	// neither written nor is put back.
	same   bool
	cgHeld *os.File      // the node's cgroup folder, held until its step holds it
	mine   nodes.Started // its process, as recorded (zero if not)
}

// startOne spawns r.Node and returns it, or fills in r's failure and
// returns nil.
func (c *call) startOne(ctx context.Context, cg cgroup.Containment, r *Result) *started {
	t := &startTx{c: c, r: r, n: r.Node, rundir: c.rundir()}
	// A start cancelled before it begins leaves no trace: no record, no
	// logfile.
	if err := ctx.Err(); err != nil {
		return t.fail(err)
	}
	if len(t.n.Command) == 0 {
		return t.fail(ErrNoCommand)
	}
	// One start of the node at a time, here or in another multi, from
	// reading its record to recording the process it started: the record
	// always names the instance that holds the node's lock, and the loser
	// of a race leaves the winner's record alone.
	lk, err := record.Lock(ctx, t.rundir, t.n.Name)
	if err != nil {
		return t.fail(err)
	}
	t.lk = lk
	defer func() { t.lk.Unlock() }()
	var prevErr error
	t.prev, t.prevStarted, t.prevReady, prevErr = record.ReadReady(t.rundir, t.n.Name)
	t.hasPrev = prevErr == nil
	standby := c.rp.Standby(t.n)
	if done := t.refused(ctx, standby); done {
		return nil
	}
	if r.unmet != nil {
		return t.fail(r.unmet)
	}
	if err := t.prepare(cg); err != nil {
		return t.fail(err)
	}
	defer t.letGoCgroup()
	env, nt, err := c.readyEnv(t.n)
	if err != nil {
		t.restore()
		t.unmake()
		return t.fail(err)
	}
	ch, err := t.spawn(ctx, env, standby)
	if err != nil && nt != nil {
		nt.Close()
	}
	var held *pidfile.HeldError
	if errors.As(err, &held) {
		if t.hasPrev {
			if st, put := c.heldRecord(t.n, t.prevStarted, held.PID); put {
				t.prevStarted = st
				t.restore()
			}
		}
		r.alreadyRunning(held.PID)
		return nil
	}
	var ee *launch.ExitError
	if err != nil && r.runOnce && errors.As(err, &ee) && errors.Is(err, ErrExitedAtOnce) {
		// Run to its end before its lock was seen: its record stays, as
		// finishOnce keeps it, and how it ended is known.
		dropCgroup(t.rundir, t.n)
		if !ee.Status.Exited() || ee.Status.ExitStatus() != 0 {
			t.fail(err)
			return nil
		}
		r.Outcome, r.Exit, r.Containment = Started, &ExitStatus{}, containmentOf(t.r.Node)
		r.PID = ee.PID
		return nil
	}
	if err != nil {
		t.restore()
		dropCgroup(t.rundir, t.n) // its empty folder, unless a tree is left in it
		if ke := (*launch.KilledError)(nil); errors.As(err, &ke) {
			r.PID = ke.PID
		}
		t.fail(err)
		if r.Exit != nil && t.n.Ready.Kind != "" {
			r.Ready = Unready // it ran, and ended before it was ready
		}
		return nil
	}
	t.recordProcess(ch)
	return &started{child: ch, tx: t, notify: nt, mine: t.mine}
}

// fail fails the start with err, and returns nil, for startOne.
func (t *startTx) fail(err error) *started {
	t.r.fail("start", err)
	return nil
}

// refused reports whether the node must not be started here, r saying
// why: its recorded process runs without its lock (lost) or is on its
// way out, it runs already, or a live multi run supervises it. standby:
// a run waits for the node's lock (--wait-for-lock).
func (t *startTx) refused(ctx context.Context, standby bool) bool {
	c, r, n := t.c, t.r, t.n
	info, infoErr := pidfile.Inspect(n.PidFile)
	if t.hasPrev && t.prevStarted.PID > 0 && infoErr == nil {
		// The recorded process may run without its lock: a second copy
		// would run beside it. One on its way out (stopped a moment ago)
		// is waited for.
		lost, stopping := c.lostProc(ctx, n, info, pin.GoneWait)
		if stopping != 0 {
			r.PID = stopping
			t.fail(stoppingError(stopping))
			return true
		}
		if lost != nil {
			lost.Start = true
			r.PID = lost.PID
			t.fail(lost)
			return true
		}
	}
	if !standby && infoErr == nil && (info.State == pidfile.Running || info.State == pidfile.Elsewhere) {
		// Running already: its record is left as it is.
		r.PID = info.PID
		// Not the node this start means. A run fails on any node held
		// (or, --wait-for-lock, stands by for it), whatever it runs.
		if err := otherCommand(t.prev, n, info.PID); t.hasPrev && err != nil && c.rp == nil {
			t.fail(err)
			return true
		}
		// Another node's pidfile, held by that node: not this node
		// running, and nothing to record.
		if !t.hasPrev || t.prev.PidFile != n.PidFile {
			if err := c.othersPidfile(n); err != nil {
				t.fail(err)
				return true
			}
		}
		r.alreadyRunning(info.PID)
		return true
	}
	if pid := c.supervisor(n.Name); pid != 0 {
		// Down under a run, which starts it itself: one started here
		// would outlive the run.
		t.fail(&supervisedError{RunPID: pid})
		return true
	}
	if infoErr == nil && info.State == pidfile.Stale {
		safefs.RemoveIn(t.rundir, stopMark(n.Name)) // of the process before
	}
	return false
}

// prepare readies the node's tree (what its last run left, its cgroup
// folder for this one, held) and writes its record.
func (t *startTx) prepare(cg cgroup.Containment) error {
	path, held, err := t.c.startCgroup(cg, t.prev, t.hasPrev, t.n, t.c.clean)
	t.cgHeld = held
	if err != nil {
		t.letGoCgroup()
		return err
	}
	t.n.Cgroup, t.r.Node.Cgroup = path, path
	// A record that says this already, and names no process, is not
	// written again: its process is written once the node runs (one write
	// fewer per node, docs/benchmarks.md). One that names a process (a
	// start after a stop) is written again without it, so that until this
	// start records its own node a stop meanwhile, or after this start is
	// killed, checks the new holder against no process rather than against
	// the old one.
	t.same = t.hasPrev && t.prevStarted.PID == 0 && reflect.DeepEqual(t.prev, t.n)
	if !t.same {
		if err := record.Write(t.rundir, t.n); err != nil {
			t.unmake()
			return err
		}
	}
	return nil
}

// letGoCgroup lets go of the node's cgroup folder, once its exec step
// holds it or has joined it, or the start failed (so that a drop can
// remove it).
func (t *startTx) letGoCgroup() {
	if t.cgHeld != nil {
		t.cgHeld.Close()
		t.cgHeld = nil
	}
}

// unmake removes the cgroup folder of a start that failed before its
// spawn: it leaves none behind.
func (t *startTx) unmake() {
	t.letGoCgroup()
	dropCgroup(t.rundir, t.n)
}

// spawn starts the node's process. A standby node's exec step waits for
// the lock for as long as it takes: other starts of the node do not wait
// for the record lock meanwhile, which spawn takes again after.
func (t *startTx) spawn(ctx context.Context, env []string, standby bool) (*launch.Child, error) {
	if standby {
		t.lk.Unlock()
	}
	ch, err := launch.Spawn(ctx, t.c.rp, t.n, env, t.c.LockTimeout)
	t.letGoCgroup() // the step holds its folder now, or has joined it
	if standby {
		if lk, lerr := record.Lock(context.WithoutCancel(ctx), t.rundir, t.n.Name); lerr == nil {
			t.lk = lk
		}
	}
	return ch, err
}

// recordProcess records the node's process, its pid and start time, for
// a node that later lets go of its lock: now, while other nodes are
// still starting, rather than after the settle window (a node that fails
// in it gets undo). The record is synced like the first write: a node
// never leaves a half-written record, and on a tmpfs such as /run it
// costs nothing.
func (t *startTx) recordProcess(ch *launch.Child) {
	st, err := pin.Identify(ch.PID())
	if err != nil {
		return
	}
	if err := record.WriteReady(t.rundir, t.n, st, record.Readiness{LogOffset: ch.LogOffset()}); err != nil {
		t.r.recordErr(fmt.Errorf("could not record the node's process: %w", err))
		return
	}
	t.mine = st
}

// restore puts back the record there was before, under the record lock.
func (t *startTx) restore() {
	if t.same {
		return // the record is as it was
	}
	var err error
	if t.hasPrev {
		err = record.WriteReady(t.rundir, t.prev, t.prevStarted, t.prevReady)
	} else {
		err = record.Remove(t.rundir, t.n.Name)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.r.recordErr(fmt.Errorf("could not put back the node's record: %w", err))
	}
}

// ours runs f under the record lock, taken again once the start has let
// go of it, while the record is still this start's: it names this
// start's process (a pid and start time name one process), or, none
// recorded, says what this start wrote.
func (t *startTx) ours(f func()) {
	lk, err := record.Lock(context.Background(), t.rundir, t.n.Name)
	if err != nil {
		t.r.recordErr(fmt.Errorf("could not put back the node's record: %w", err))
		return
	}
	defer lk.Unlock()
	cur, curStarted, err := record.ReadStarted(t.rundir, t.n.Name)
	if err != nil {
		return
	}
	if t.mine.PID != 0 && curStarted == t.mine || t.mine.PID == 0 && curStarted.PID == 0 && reflect.DeepEqual(cur, t.n) {
		f()
	}
}

// undo puts back the record there was before, unless another start has
// recorded its own since: a node that failed as it started (gone in the
// settle window) never ran as far as its record goes.
func (t *startTx) undo() { t.ours(t.restore) }

// recordDown rewrites the record without the process, unless another
// start has recorded its own since: a node that ran, but failed its
// readiness check and was stopped, is known, and down.
func (t *startTx) recordDown() {
	t.ours(func() {
		if err := record.Write(t.rundir, t.n); err != nil {
			t.r.recordErr(fmt.Errorf("could not record the node down: %w", err))
		}
	})
}
