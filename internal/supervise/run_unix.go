//go:build unix

package supervise

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

	"github.com/multi-launcher/multi/internal/cgroup"
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

// Run supervises ns in the foreground through h until they are stopped
// (see package multi's Cluster.Run for what that means), and returns the
// exit code the run should end with and why (nil with code 0); h keeps
// each node's last result. It makes the reaper, the one waiter of
// this process's children while it runs, and hands it to every start.
// Another run under way in this process is [ErrRunUnderWay].
func Run(ctx context.Context, h Host, ns []nodes.Node, o Options) (code int, why error) {
	// Reaping is process-wide: one run at a time per process.
	if !running.CompareAndSwap(false, true) {
		return 1, ErrRunUnderWay
	}
	defer running.Store(false)
	rp := launch.NewReaper()
	r := &run{h: h, o: o, rp: rp, byPID: map[int]*runNode{}, early: map[int]syscall.WaitStatus{},
		events: make(chan func(), 64), done: make(chan struct{}), notifyAddr: o.NotifySocket}
	for _, n := range ns {
		r.nodes = append(r.nodes, &runNode{n: n})
	}
	if r.notifyAddr == "" {
		r.notifyAddr = os.Getenv("NOTIFY_SOCKET")
	}
	if os.Getpid() != 1 {
		restore, err := launch.SetSubreaper()
		if err != nil {
			r.logf("cannot become a child subreaper (orphans of the nodes will not be reaped here): %v", err)
		}
		defer restore()
	}
	// Out of a cgroup that holds other processes (or is the root of a
	// container's cgroup namespace) into a leaf of its own, before any
	// node starts: the nodes' cgroups, beside it, could then have
	// controllers enabled for them.
	if p, back, err := cgroup.PlaceRun(o.RunDir); err != nil {
		r.logf("stays in its cgroup: %v", err)
	} else {
		if p.Leaf != "" {
			r.logf("moved into cgroup %s (%s); its nodes' cgroups are beside it", p.Leaf, p.Why)
		}
		defer back()
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
	r.loop(ctx)
	return r.code, r.why
}

// run is the state of one Run; only its loop goroutine touches
// it, but for mu's fields.
type run struct {
	h  Host
	o  Options
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
	withdrawn    bool // readiness withdrawn (see recheckReady)
	notifyAddr   string
	notifyq      chan string   // states for the notify socket, in order
	notified     chan struct{} // closed once notifyq is drained

	files  runFiles
	health *healthServer // --health, or nil

	mu      sync.Mutex
	standby map[string]*exec.Cmd // nodes waiting for their lock; cmd once started
	halted  bool                 // the stop has begun: a standby started now is ended
	out     sync.WaitGroup       // output copiers
	outMu   sync.Mutex
}

// A runNode is one node of the run.
type runNode struct {
	n        nodes.Node
	live     nodes.ReadyCheck // its liveness check (Options.Live), if any
	cgroup   string           // the cgroup folder its running process's tree is in
	pid      int              // its running process; 0 if none
	starting bool             // a start (or a standby wait) is under way
	waiting  *time.Timer
	restarts int
	since    time.Time
	// restarted: when its recent restarts were (see crashLoop); fatal:
	// left down by that limit. restartsTotal, exits and lastExit are for
	// the metrics (health_unix.go).
	restarted            []time.Time
	fatal                bool
	restartsTotal, exits int
	lastExit             int
	stoodBy              bool // started as a standby once
	ran                  bool // started by this run once
	// stopFailed: its stop through its pidfile failed (see stopDirect).
	stopFailed bool
	direct     *time.Timer // its KILL, once signalled directly
}

// logf writes one line of the run's own log. What it quotes (a path, an
// error, a check as typed) is shown escaped, never raw.
func (r *run) logf(format string, args ...any) {
	if r.o.Log != nil {
		r.outMu.Lock()
		fmt.Fprintf(r.o.Log, "multi run: %s\n", nodes.Printable(fmt.Sprintf(format, args...)))
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

func (r *run) loop(ctx context.Context) {
	defer r.closeHealth()
	if outs, ok := r.h.Check(r.checkFiles()); !ok {
		r.decide(1, outs[0].Err)
		return
	}
	r.openTags()
	for _, rn := range r.nodes {
		r.tag(rn)
		rn.starting = true
	}
	r.publish()
	r.startLive()
	outs := r.startAll(ctx)
	// Every success first, so that a failure's stop sees them all.
	for pass := 0; pass < 2; pass++ {
		for i, out := range outs {
			if (out.Err == nil) == (pass == 0) {
				r.started(r.nodes[i], out)
			}
		}
	}
	r.maybeEnd()
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	for !r.end {
		r.recheckReady()
		r.publish()
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
				if _, err := pin.SignalNode(rn.n.PidFile, rn.pid, syscall.SIGKILL, r.o.Group); err != nil && !errors.Is(err, pin.ErrNotRunning) {
					r.logf("%s: %v", rn.n.Name, err)
					// Its own child all the same (see stopDirect).
					if r.rp.SignalKid(rn.pid, syscall.SIGKILL) == nil {
						rn.stopFailed = true
						r.decide(1, r.h.Fail(rn.n, fmt.Errorf("%w: %w", ErrStopFailed, err)))
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
		if _, err := pin.SignalNode(rn.n.PidFile, rn.pid, sig, r.o.Group); err != nil && !errors.Is(err, pin.ErrNotRunning) {
			r.logf("%s: forwarding %s: %v", rn.n.Name, pin.SignalName(sig), err)
		}
	}
}

// running says a Run is under way in this process: it reaps every child
// of the process (wait4(-1)), so there is at most one.
var running atomic.Bool
