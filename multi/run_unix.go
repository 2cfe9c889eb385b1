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
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// The exec step's run mode (see execStep): stepOutEnv keeps the inherited
// stdout and stderr (Run's pipes) instead of opening the logfile;
// stepStandbyEnv waits for a held lock instead of failing.
const (
	stepOutEnv     = "_MULTI_STEP_INHERIT_OUTPUT"
	stepStandbyEnv = "_MULTI_STEP_WAIT_LOCK"
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
// stop, 0 when every node exited 0 or by the stop signal.
//
// What it does meanwhile:
//
//   - Reaping: it reaps every child, its nodes and, as PID 1 or as a child
//     subreaper (PR_SET_CHILD_SUBREAPER, which it becomes otherwise), every
//     orphan of their process trees. One wait4(-1) loop, woken by SIGCHLD,
//     is the only waiter in the process (see [reaper]); only one Run may be
//     under way in a process.
//   - Signals: SIGTERM, SIGINT and SIGQUIT (or ctx's end) stop every node
//     as StopWait does: c.Signal, SIGCONT, and SIGKILL after c.Timeout
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
// While the nodes run, Run sleeps in the kernel: no polling. Run sets
// c.Settle to -1 (it watches its nodes for their whole life instead) and a
// zero c.Timeout to [DefaultRunTimeout]; c.Detach is not used. Signals that
// come while the nodes first start are acted on once they have.
func (c *Cluster) Run(ctx context.Context, o RunOptions) (int, error) {
	rp := newReaper()
	if !active.CompareAndSwap(nil, rp) {
		return 1, errors.New("multi: run: another run is under way in this process")
	}
	defer active.Store(nil)
	r := &run{c: c, o: o, rp: rp, byPID: map[int]*runNode{}, early: map[int]syscall.WaitStatus{},
		events: make(chan func(), 64), done: make(chan struct{}), notifyAddr: o.NotifySocket}
	if r.notifyAddr == "" {
		r.notifyAddr = os.Getenv("NOTIFY_SOCKET")
	}
	if os.Getpid() != 1 {
		if err := setSubreaper(); err != nil {
			r.logf("cannot become a child subreaper (orphans of the nodes will not be reaped here): %v", err)
		}
	}
	// A log reader that goes away (a closed stdout pipe) must not end the
	// run and leave its nodes unsupervised: writes fail instead.
	signal.Ignore(syscall.SIGPIPE)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	r.sigs = make(chan os.Signal, 16)
	signal.Notify(r.sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT,
		syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(r.sigs)
	quit, reaped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			rp.reapAll()
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
	rp.prepare = r.prepare
	rp.standby = r.isStandby
	c.Settle = -1
	if c.Timeout <= 0 {
		c.Timeout = DefaultRunTimeout
	}
	defer close(r.done)
	return r.loop(ctx), nil
}

// run is the state of one [Cluster.Run]; only its loop goroutine touches
// it, but for mu's fields.
type run struct {
	c  *Cluster
	o  RunOptions
	rp *reaper

	sigs   chan os.Signal
	events chan func() // work for the loop, from other goroutines
	done   chan struct{}

	nodes []*runNode
	byPID map[int]*runNode
	early map[int]syscall.WaitStatus // exits seen before their start's result

	code    int
	decided bool
	// stopping: the stop has begun; stopSignals counts TERM, INT, QUIT.
	stopping     bool
	stopSignals  int
	stopsPending int
	graceTimer   *time.Timer
	end          bool
	ready        bool
	notifyAddr   string

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

func (r *run) decide(code int) {
	if !r.decided {
		r.code, r.decided = code, true
	}
}

func (r *run) loop(ctx context.Context) int {
	results := r.c.results()
	for i := range results {
		r.nodes = append(r.nodes, &runNode{n: results[i].Node})
	}
	if !r.c.checkDistinct("run", results) || !r.c.checkRecords("run", results) || !r.c.makeRunDir("run", results) {
		for i := range results {
			r.c.report(&results[i])
		}
		return 1
	}
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
		select {
		case s := <-r.sigs:
			r.signal(s.(syscall.Signal))
		case <-ctxDone:
			ctxDone = nil
			r.requestStop("the caller's context ended")
		case <-r.rp.wake:
			for _, e := range r.rp.takeExits() {
				r.nodeExited(e)
			}
		case f := <-r.events:
			f()
		case <-grace:
			r.logf("every lock is released; not waiting longer for the exit of %s", r.runningNames())
			r.end = true
		}
	}
	r.finish()
	return r.code
}

// finish undoes what the run left: ready file, run tags; and lets the
// last lines of output through.
func (r *run) finish() {
	if r.o.ReadyFile != "" {
		os.Remove(r.o.ReadyFile)
	}
	for _, rn := range r.nodes {
		os.Remove(runTagPath(r.c.rundir(), rn.n.Name))
	}
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

func (r *run) tag(rn *runNode) {
	if err := r.c.tagRun(rn.n.Name); err != nil {
		r.logf("%s: cannot leave its run tag (a stop from another shell will look like a failure): %v", rn.n.Name, err)
	}
}

// signal acts on a signal Run got.
func (r *run) signal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT:
		r.stopSignals++
		if r.stopSignals == 1 {
			r.requestStop("got " + SignalName(sig))
			return
		}
		r.logf("got %s again: killing every node", SignalName(sig))
		for _, rn := range r.nodes {
			if rn.pid > 0 {
				if _, err := signalNode(rn.n.PidFile, rn.pid, syscall.SIGKILL, r.c.Group); err != nil && !errors.Is(err, ErrNotRunning) {
					r.logf("%s: %v", rn.n.Name, err)
				}
			}
		}
		return
	}
	for _, rn := range r.nodes {
		if rn.pid <= 0 {
			continue
		}
		if _, err := signalNode(rn.n.PidFile, rn.pid, sig, r.c.Group); err != nil && !errors.Is(err, ErrNotRunning) {
			r.logf("%s: forwarding %s: %v", rn.n.Name, SignalName(sig), err)
		}
	}
}
