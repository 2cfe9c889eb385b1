//go:build unix

package multi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	if !r.c.checkDistinct("run", results) || !r.c.makeRunDir("run", results) {
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

// started takes in the result of a node's start.
func (r *run) started(rn *runNode, res Result) {
	rn.starting = false
	r.mu.Lock()
	delete(r.standby, rn.n.Name)
	r.mu.Unlock()
	if res.Err == nil {
		rn.pid, rn.since = res.PID, time.Now()
		r.byPID[rn.pid] = rn
		if st, ok := r.early[rn.pid]; ok {
			delete(r.early, rn.pid)
			r.nodeExited(nodeExit{rn.pid, st})
			return
		}
		if r.stopping {
			r.stopNodes([]*runNode{rn})
			return
		}
		r.checkReady()
		return
	}
	if r.stopping {
		r.maybeEnd()
		return
	}
	if errors.Is(res.Err, ErrAlreadyRunning) && r.o.WaitForLock && !rn.stoodBy {
		// Once: the standby step waits in the kernel, and comes back
		// only with the lock or a failure.
		rn.stoodBy = true
		r.logf("%s: its lock is held by another process; waiting for it (--wait-for-lock)", rn.n.Name)
		r.standbyStart(rn)
		return
	}
	var ee *exitError
	if errors.As(res.Err, &ee) {
		r.onExit(rn, ee.status)
		return
	}
	// It cannot run here (no program, a lock held elsewhere, ...): no
	// policy makes that better.
	r.decide(ExitCode(res.Err))
	r.requestStop(rn.n.Name + " could not start")
}

// startNode starts rn in the background; the result comes back to the
// loop.
func (r *run) startNode(rn *runNode, word string) {
	rn.starting = true
	r.tag(rn)
	go func() {
		res := []Result{{Node: rn.n}}
		r.c.startAll(context.Background(), res, func(int) (string, bool) { return word, true })
		r.post(func() { r.started(rn, res[0]) })
	}()
}

// standbyStart starts rn with an exec step that waits for the lock.
func (r *run) standbyStart(rn *runNode) {
	r.mu.Lock()
	if r.standby == nil {
		r.standby = map[string]*exec.Cmd{}
	}
	r.standby[rn.n.Name] = nil
	r.mu.Unlock()
	r.startNode(rn, "took over")
}

// prepare readies a node's exec step (the reaper's hook, called in the
// starting goroutine): pipes for its output, a wait for its lock.
func (r *run) prepare(cmd *exec.Cmd, n nodes.Node) func(error) {
	r.mu.Lock()
	_, standby := r.standby[n.Name]
	r.mu.Unlock()
	if standby {
		cmd.Env = append(cmd.Env, stepStandbyEnv+"=1")
	}
	var ends, reads []*os.File
	if r.o.Stdout != nil {
		errw := r.o.Stderr
		if errw == nil {
			errw = r.o.Stdout
		}
		or, ow, err1 := os.Pipe()
		er, ew, err2 := os.Pipe()
		if err1 == nil && err2 == nil {
			cmd.Stdout, cmd.Stderr = ow, ew
			cmd.Env = append(cmd.Env, stepOutEnv+"=1")
			ends, reads = []*os.File{ow, ew}, []*os.File{or, er}
			return func(err error) {
				for _, f := range ends {
					f.Close()
				}
				if err != nil {
					for _, f := range reads {
						f.Close()
					}
					return
				}
				r.out.Add(2)
				go r.copyLines(r.o.Stdout, n.Name, or)
				go r.copyLines(errw, n.Name, er)
				r.keepStandby(standby, n, cmd)
			}
		}
		for _, f := range []*os.File{or, ow, er, ew} {
			if f != nil {
				f.Close()
			}
		}
		// No pipes: the node writes to its logfile.
	}
	return func(err error) {
		if err == nil {
			r.keepStandby(standby, n, cmd)
		}
	}
}

// keepStandby records the started exec step of a node that waits for its
// lock, so that a stop can end the wait.
func (r *run) keepStandby(standby bool, n nodes.Node, cmd *exec.Cmd) {
	if !standby {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.halted {
		cmd.Process.Signal(syscall.SIGKILL) // the stop missed it
		return
	}
	if _, ok := r.standby[n.Name]; ok {
		r.standby[n.Name] = cmd
	}
}

// copyLines copies a node's output to w, each line prefixed with the
// node's name; a line too long for the buffer goes in pieces.
func (r *run) copyLines(w io.Writer, name string, f *os.File) {
	defer r.out.Done()
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	prefix := []byte(name + " | ")
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			b := append(prefix[:len(prefix):len(prefix)], line...)
			if b[len(b)-1] != '\n' {
				b = append(b, '\n')
			}
			r.outMu.Lock()
			w.Write(b)
			r.outMu.Unlock()
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return
		}
	}
}

// nodeExited takes in the exit of a node's process, from the reaper.
func (r *run) nodeExited(e nodeExit) {
	rn := r.byPID[e.pid]
	if rn == nil {
		r.early[e.pid] = e.status // its start's result is on its way
		return
	}
	delete(r.byPID, e.pid)
	rn.pid = 0
	ws := e.status
	if r.stopping {
		if !(ws.Exited() && ws.ExitStatus() == 0) && !(ws.Signaled() && ws.Signal() == r.c.signal()) {
			r.decide(exitCode(ws))
		}
		r.maybeEnd()
		return
	}
	if !r.c.tagged(rn.n.Name) {
		r.logf("%s: stopped from another shell (pid %d, %s); left down", rn.n.Name, e.pid, describeExit(ws))
		r.maybeEnd()
		return
	}
	r.logf("%s: exited (pid %d, %s)", rn.n.Name, e.pid, describeExit(ws))
	r.onExit(rn, ws)
}

// onExit applies the policy to a node that ended on its own.
func (r *run) onExit(rn *runNode, ws syscall.WaitStatus) {
	switch r.o.OnExit {
	case Ignore:
		r.decide(exitCode(ws))
		r.logf("%s: left down (--on-exit=ignore)", rn.n.Name)
		r.maybeEnd()
	case Restart:
		first, most := r.o.backoff()
		if !rn.since.IsZero() && time.Since(rn.since) >= most {
			rn.restarts = 0 // it ran well for a while: a fresh start
		}
		delay := first
		for i := 0; i < rn.restarts && delay < most; i++ {
			delay *= 2
		}
		delay = min(delay, most)
		rn.restarts++
		r.logf("%s: restarting in %s (restart %d)", rn.n.Name, delay, rn.restarts)
		rn.starting = true // counts as about to run
		rn.waiting = time.AfterFunc(delay, func() {
			r.post(func() {
				rn.waiting = nil
				if r.stopping {
					rn.starting = false
					r.maybeEnd()
					return
				}
				r.startNode(rn, "restarted")
			})
		})
	default:
		r.decide(exitCode(ws))
		r.requestStop(rn.n.Name + " exited")
	}
}

// requestStop begins the stop of every node.
func (r *run) requestStop(why string) {
	if r.stopping {
		return
	}
	r.stopping = true
	r.logf("%s: stopping every node", why)
	r.notify("STOPPING=1")
	if r.o.ReadyFile != "" {
		os.Remove(r.o.ReadyFile)
	}
	var list []*runNode
	for _, rn := range r.nodes {
		if rn.waiting != nil && rn.waiting.Stop() {
			rn.waiting, rn.starting = nil, false
		}
		if rn.pid > 0 {
			list = append(list, rn)
		}
	}
	// Steps that wait for a lock held elsewhere hold nothing yet: they
	// are ended (our own unreaped children, signalled through their
	// pidfds).
	r.mu.Lock()
	r.halted = true
	for _, cmd := range r.standby {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	r.mu.Unlock()
	if len(list) > 0 {
		r.stopNodes(list)
	}
	r.maybeEnd()
}

// stopNodes stopwaits the nodes in the background.
func (r *run) stopNodes(list []*runNode) {
	r.stopsPending++
	results := make([]Result, len(list))
	for i, rn := range list {
		results[i].Node = rn.n
	}
	go func() {
		r.c.stopWait(context.Background(), results, stopOpts{op: "stopwait", sig: r.c.signal(), timeout: r.c.Timeout, report: true})
		r.post(func() {
			r.stopsPending--
			r.maybeEnd()
		})
	}()
}

// maybeEnd ends the loop when nothing is left to wait for.
func (r *run) maybeEnd() {
	busy := false
	for _, rn := range r.nodes {
		if rn.starting || rn.pid > 0 {
			busy = true
		}
	}
	if !r.stopping {
		if !busy {
			r.logf("no node left running")
			r.stopping = true
			r.end = true
		}
		return
	}
	if r.stopsPending > 0 {
		return
	}
	for _, rn := range r.nodes {
		if rn.starting {
			return
		}
	}
	if !busy {
		r.end = true
	} else if r.graceTimer == nil {
		r.graceTimer = time.NewTimer(endGrace)
	}
}

func (r *run) runningNames() string {
	s := ""
	for _, rn := range r.nodes {
		if rn.pid > 0 {
			s += fmt.Sprintf(" %s (pid %d)", rn.n.Name, rn.pid)
		}
	}
	return s
}

// checkReady signals readiness once every node runs.
func (r *run) checkReady() {
	if r.ready || r.stopping {
		return
	}
	for _, rn := range r.nodes {
		if rn.pid <= 0 {
			return
		}
	}
	r.ready = true
	if r.o.ReadyFile != "" {
		if err := os.WriteFile(r.o.ReadyFile, []byte("ready\n"), 0o644); err != nil {
			r.logf("ready file: %v", err)
		}
	}
	r.notify("READY=1")
	r.logf("every node holds its lock: ready")
}

// notify sends a state to the notify socket (sd_notify(3)), if there is
// one.
func (r *run) notify(state string) {
	if r.notifyAddr == "" {
		return
	}
	if err := sdNotify(r.notifyAddr, state); err != nil {
		r.logf("notify socket %s: %v", r.notifyAddr, err)
	}
}

// sdNotify sends one datagram to the unix socket addr; a name starting
// with '@' is in the abstract namespace.
func sdNotify(addr, state string) error {
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}

// awaitLockFree blocks, in the kernel (F_SETLKW), until nobody holds a
// lock on the pidfile at path, then lets go at once: the caller then tries
// to take it as a node does. It reports false, at once, if the file cannot
// be opened (but for a missing file: nothing to wait for).
func awaitLockFree(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|noFollow, 0)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close() // closing drops the lock taken here
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	for {
		err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLKW, &lk)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
