//go:build unix

package multi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"

	"github.com/multi-launcher/multi/internal/pin"

	"github.com/multi-launcher/multi/nodes"
)

// endGrace bounds how long Run waits, once every lock is released, for the
// exit statuses of nodes still not reaped: a node that closed its lock's
// descriptor may run on. As PID 1, Run's exit ends them all.
const endGrace = 2 * time.Second

// outputGrace bounds how long Run waits, at its end, for the last lines of
// its nodes' output: a process the node forked may hold the pipe open.
const outputGrace = time.Second

// Run starts every node as [Cluster.Start] does (each node's own process
// holds its locked pidfile, so status, stop, stopwait, kill and logs work
// on them from another shell) and stays in the foreground, as a
// container's PID 1 or a systemd Type=notify service, until they are
// stopped. It returns the exit code the run should end with, as tini
// reports it: the first node that exited unexpectedly decides (its exit
// code, or 128+signal; 127 when its program does not exist, 126 when it
// cannot be executed; 1 for another failure to start); after a requested
// stop, 0 when every node exited 0 or by the stop signal; 1 when a node
// could not be stopped through its pidfile ([ErrStopFailed]: the run then
// signals its own child directly, and KILLs it after o.Stop.Timeout). With a
// code other than 0 comes a [*RunError]: the node that decided it, why
// (errors.Is: [launch.ErrCommandNotFound], [launch.ErrCommandNotExecutable],
// [launch.ErrExitedAtOnce], [ErrNodeExited], [ErrStopFailed],
// [ErrDuplicateNode], ...) and each node's last result. Another error
// ([ErrRunUnderWay]) means the run did not begin.
//
// A library caller gets its process back as it was: the child subreaper
// flag as it found it, and its signal handling (Run only adds channels of
// its own, and stops them).
//
// What it does meanwhile:
//
//   - Reaping: it reaps every child, its nodes and, as PID 1 or as a child
//     subreaper (PR_SET_CHILD_SUBREAPER, which it becomes otherwise), every
//     orphan of their process trees. One wait4(-1) loop, woken by SIGCHLD,
//     is the only waiter in the process (see [reaper]); only one Run may be
//     under way in a process.
//   - Signals: SIGTERM, SIGINT and SIGQUIT (or ctx's end) stop every node
//     as StopWait does: o.Stop.Signal, SIGCONT, and SIGKILL after o.Stop.Timeout
//     ([DefaultRunTimeout] when zero); Run returns once every lock is
//     released. A second one kills every node at once. SIGHUP, SIGUSR1,
//     SIGUSR2 and SIGWINCH are forwarded to every node, through its lock
//     as every signal multi sends.
//   - A node that exits on its own: see [RunOptions.OnExit]. A node
//     stopped on purpose by another multi (stop, stopwait, kill, restart:
//     they remove the node's run tag before the signal, see [runTagExt])
//     is not a failure: it stays down and the others run on. Run ends
//     when no node is left running or about to restart.
//   - Readiness: once every node holds its lock, READY=1 goes to the
//     notify socket and the ready file is created; STOPPING=1 is sent and
//     the ready file removed when the stop begins.
//
// While the nodes run, Run sleeps in the kernel: no polling. Run uses no
// settle window (it watches its nodes for their whole life instead) and
// ignores c.Detach; it changes neither c nor o. Signals that
// come while the nodes first start are acted on once they have.
func (c *Cluster) Run(ctx context.Context, o RunOptions) (int, error) {
	if o.Stop.Timeout <= 0 {
		o.Stop.Timeout = DefaultRunTimeout
	}
	c = c.with(o.Stop)
	c.Settle = -1
	// Reaping is process-wide: one run at a time per process.
	if !running.CompareAndSwap(false, true) {
		return 1, fmt.Errorf("multi: run: %w", ErrRunUnderWay)
	}
	defer running.Store(false)
	rp := launch.NewReaper()
	c.rp = rp
	r := &run{c: c, o: o, rp: rp, byPID: map[int]*runNode{}, early: map[int]syscall.WaitStatus{},
		events: make(chan func(), 64), done: make(chan struct{}), notifyAddr: o.NotifySocket}
	if r.notifyAddr == "" {
		r.notifyAddr = os.Getenv("NOTIFY_SOCKET")
	}
	if os.Getpid() != 1 {
		restore, err := setSubreaper()
		if err != nil {
			r.logf("cannot become a child subreaper (orphans of the nodes will not be reaped here): %v", err)
		}
		defer restore()
	}
	// A log reader that goes away (a closed stdout pipe) must not end the
	// run and leave its nodes unsupervised: writes fail instead. Notify,
	// not Ignore: Stop undoes it for a library caller, and the nodes do
	// not inherit SIGPIPE ignored.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	// The stop signals have a channel of their own: the runtime drops a
	// signal whose channel is full, and a storm of forwarded ones must
	// never make it drop a TERM.
	r.stops = make(chan os.Signal, 4)
	signal.Notify(r.stops, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(r.stops)
	r.fwd = make(chan os.Signal, 16)
	signal.Notify(r.fwd, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(r.fwd)
	quit, reaped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			rp.ReapAll()
			select {
			case <-chld:
			case <-quit:
				return
			}
		}
	}()
	defer func() {
		close(quit)
		<-reaped
	}()
	rp.Prepare = r.prepare
	rp.StandbyFor = r.isStandby
	defer close(r.done)
	return r.loop(ctx)
}

// run is the state of one [Cluster.Run]; only its loop goroutine touches
// it, but for mu's fields.
type run struct {
	c  *Cluster
	o  RunOptions
	rp *launch.Reaper

	stops  chan os.Signal // TERM, INT, QUIT
	fwd    chan os.Signal // the signals forwarded to the nodes
	events chan func()    // work for the loop, from other goroutines
	done   chan struct{}

	nodes []*runNode
	byPID map[int]*runNode
	early map[int]syscall.WaitStatus // exits seen before their start's result

	code    int
	why     error // what decided code
	decided bool
	// stopping: the stop has begun; stopSignals counts TERM, INT, QUIT.
	stopping     bool
	stopSignals  int
	stopsPending int
	graceTimer   *time.Timer
	end          bool
	ready        bool
	notifyAddr   string
	notifyq      chan string   // states for the notify socket, in order
	notified     chan struct{} // closed once notifyq is drained

	files runFiles

	mu      sync.Mutex
	standby map[string]*exec.Cmd // nodes waiting for their lock; cmd once started
	halted  bool                 // the stop has begun: a standby started now is ended
	out     sync.WaitGroup       // output copiers
	outMu   sync.Mutex
}

// A runNode is one node of the run.
type runNode struct {
	n        nodes.Node
	pid      int  // its running process; 0 if none
	starting bool // a start (or a standby wait) is under way
	waiting  *time.Timer
	restarts int
	since    time.Time
	stoodBy  bool // started as a standby once
	// stopFailed: its stop through its pidfile failed (see stopDirect).
	stopFailed bool
	direct     *time.Timer // its KILL, once signalled directly
	res        Result      // its last result, for RunError
}

func (r *run) logf(format string, args ...any) {
	if r.o.Log != nil {
		r.outMu.Lock()
		fmt.Fprintf(r.o.Log, "multi run: "+format+"\n", args...)
		r.outMu.Unlock()
	}
}

// post hands f to the loop; dropped once the run is over.
func (r *run) post(f func()) {
	select {
	case r.events <- f:
	case <-r.done:
	}
}

// decide sets the run's exit code and why, unless it is set already.
func (r *run) decide(code int, why error) {
	if !r.decided {
		r.code, r.why, r.decided = code, why, true
	}
}

// result is how the run ended: its code, and a [*RunError] unless it is 0.
func (r *run) result() (int, error) {
	if r.code == 0 {
		return 0, nil
	}
	e := &RunError{Code: r.code, Err: r.why}
	var ne *NodeError
	if errors.As(r.why, &ne) {
		e.Node = ne.Node
	}
	for _, rn := range r.nodes {
		e.Results = append(e.Results, rn.res)
	}
	return r.code, e
}

func (r *run) loop(ctx context.Context) (int, error) {
	results := r.c.results()
	for i := range results {
		r.nodes = append(r.nodes, &runNode{n: results[i].Node})
	}
	if !r.c.checkDistinct("run", results) || !r.c.checkRecords("run", results) || !r.c.makeRunDir("run", results) || !r.checkReadyFile(results) {
		for i := range results {
			r.c.report(&results[i])
			r.nodes[i].res = results[i]
		}
		r.decide(1, results[0].Err)
		return r.result()
	}
	r.openTags()
	for _, rn := range r.nodes {
		r.tag(rn)
		rn.starting = true
	}
	r.c.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	// Every success first, so that a failure's stop sees them all.
	for pass := 0; pass < 2; pass++ {
		for i, res := range results {
			if (res.Err == nil) == (pass == 0) {
				r.started(r.nodes[i], res)
			}
		}
	}
	r.maybeEnd()
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	for !r.end {
		if r.graceTimer != nil {
			grace = r.graceTimer.C
		}
		// A stop signal first, however many others are waiting.
		select {
		case s := <-r.stops:
			r.signal(s.(syscall.Signal))
			continue
		default:
		}
		select {
		case s := <-r.stops:
			r.signal(s.(syscall.Signal))
		case s := <-r.fwd:
			r.signal(s.(syscall.Signal))
		case <-ctxDone:
			ctxDone = nil
			r.requestStop("the caller's context ended")
		case <-r.rp.Exits():
			for _, e := range r.rp.TakeExits() {
				r.nodeExited(e)
			}
		case f := <-r.events:
			f()
		case <-grace:
			r.giveUp()
		}
	}
	r.finish()
	r.endNotify()
	return r.result()
}

// finish undoes what the run left: ready file, run tags; and lets the
// last lines of output through.
func (r *run) finish() {
	r.closeFiles()
	flushed := make(chan struct{})
	go func() {
		r.out.Wait()
		close(flushed)
	}()
	t := time.NewTimer(outputGrace)
	defer t.Stop()
	select {
	case <-flushed:
	case <-t.C:
	}
}

// signal acts on a signal Run got.
func (r *run) signal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT:
		r.stopSignals++
		if r.stopSignals == 1 {
			r.requestStop("got " + pin.SignalName(sig))
			return
		}
		r.logf("got %s again: killing every node", pin.SignalName(sig))
		for _, rn := range r.nodes {
			if rn.pid > 0 {
				if _, err := pin.SignalNode(rn.n.PidFile, rn.pid, syscall.SIGKILL, r.c.stop.Group); err != nil && !errors.Is(err, pin.ErrNotRunning) {
					r.logf("%s: %v", rn.n.Name, err)
					// Its own child all the same (see stopDirect).
					if r.rp.SignalKid(rn.pid, syscall.SIGKILL) == nil {
						rn.stopFailed = true
						r.decide(1, &NodeError{Node: rn.n.Name, Op: "run", Err: fmt.Errorf("%w: %w", ErrStopFailed, err)})
						r.logf("%s: sent KILL to its process (pid %d), the run's own child", rn.n.Name, rn.pid)
					}
				}
			}
		}
		return
	}
	for _, rn := range r.nodes {
		if rn.pid <= 0 {
			continue
		}
		if _, err := pin.SignalNode(rn.n.PidFile, rn.pid, sig, r.c.stop.Group); err != nil && !errors.Is(err, pin.ErrNotRunning) {
			r.logf("%s: forwarding %s: %v", rn.n.Name, pin.SignalName(sig), err)
		}
	}
}

// running says a Run is under way in this process: it reaps every child
// of the process (wait4(-1)), so there is at most one.
var running atomic.Bool
