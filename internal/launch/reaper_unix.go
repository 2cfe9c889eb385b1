//go:build unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/multi-launcher/multi/internal/pin"

	"github.com/multi-launcher/multi/nodes"
)

// NoFollow opens a file without following a link.
const NoFollow = syscall.O_NOFOLLOW

// A reaper is the one waiter of a running [Cluster.Run]: a wait4(-1) loop
// woken by SIGCHLD that reaps every child, nodes and orphans alike. Mixing
// such a loop with exec.Cmd.Wait would let one steal the other's children
// (go-reaper#2), so under Run nothing else waits: Spawn, confirm and the
// settle checks get a node's status from the reaper ([waitChild]), and a
// node let go is handed over to it ([handOver]).
//
// Forking and reaping exclude each other (forkMu): a child is registered
// before the reaper can reap it, so its status is never taken for an
// orphan's.
type Reaper struct {
	forkMu sync.RWMutex

	mu      sync.Mutex
	kids    map[int]*kid
	exits   []NodeExit // statuses of handed-over nodes, for Run
	wake    chan struct{}
	orphans int // orphans reaped: not ours, collected all the same

	// Prepare, if set, readies a node's exec step before its start; the
	// function it returns learns whether the start worked.
	Prepare func(cmd *exec.Cmd, n nodes.Node) func(error)
	// StandbyFor, if set, reports whether a start of n waits for its lock
	// (--wait-for-lock) for as long as it takes.
	StandbyFor func(n nodes.Node) bool
}

// A kid is a child started through the reaper.
type kid struct {
	done   chan struct{} // closed once reaped
	status syscall.WaitStatus
	handed bool // let go: its exit goes to Run
}

// NodeExit is a node's process that ended.
type NodeExit struct {
	PID    int
	Status syscall.WaitStatus
}

// NewReaper returns a reaper with no child yet. Reaping is process-wide:
// one process has at most one reaper at a time, owned by its supervisor.
func NewReaper() *Reaper {
	return &Reaper{kids: map[int]*kid{}, wake: make(chan struct{}, 1)}
}

// ReapAll reaps every child that has exited, without blocking.
func (rp *Reaper) ReapAll() {
	rp.forkMu.Lock()
	defer rp.forkMu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		rp.mu.Lock()
		k := rp.kids[pid]
		if k == nil {
			rp.orphans++
		} else {
			k.status = ws
			close(k.done)
			if k.handed {
				delete(rp.kids, pid)
				rp.post(NodeExit{pid, ws})
			}
		}
		rp.mu.Unlock()
	}
}

// post queues a node's exit for Run; rp.mu is held.
func (rp *Reaper) post(e NodeExit) {
	rp.exits = append(rp.exits, e)
	select {
	case rp.wake <- struct{}{}:
	default:
	}
}

// Exits is where the reaper says that node exits are queued, for
// [Reaper.TakeExits].
func (rp *Reaper) Exits() <-chan struct{} { return rp.wake }

// TakeExits returns the node exits queued since the last call.
func (rp *Reaper) TakeExits() []NodeExit {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	e := rp.exits
	rp.exits = nil
	return e
}

// startChild starts cmd; under Run, registered with the reaper before the
// reaper can reap it.
func (rp *Reaper) startChild(cmd *exec.Cmd) error {
	if rp == nil {
		return cmd.Start()
	}
	rp.forkMu.RLock()
	defer rp.forkMu.RUnlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	rp.mu.Lock()
	rp.kids[cmd.Process.Pid] = &kid{done: make(chan struct{})}
	rp.mu.Unlock()
	return nil
}

// prepareRun readies cmd, the exec step of n, for Run (its output, its
// wait for a held lock); the function returned is told how the start went.
func (rp *Reaper) prepareRun(cmd *exec.Cmd, n nodes.Node) func(error) {
	if rp == nil || rp.Prepare == nil {
		return func(error) {}
	}
	return rp.Prepare(cmd, n)
}

// Standby reports whether the start of n under way waits for its
// lock for as long as it takes (Run's standby).
func (rp *Reaper) Standby(n nodes.Node) bool {
	return rp != nil && rp.StandbyFor != nil && rp.StandbyFor(n)
}

// waitReaped waits for cmd's process through Run's reaper, if Run is under
// way and started it.
func (rp *Reaper) waitReaped(cmd *exec.Cmd) (syscall.WaitStatus, bool) {
	if rp == nil {
		return 0, false
	}
	rp.mu.Lock()
	k := rp.kids[cmd.Process.Pid]
	rp.mu.Unlock()
	if k == nil {
		return 0, false
	}
	<-k.done
	rp.mu.Lock()
	delete(rp.kids, cmd.Process.Pid)
	rp.mu.Unlock()
	cmd.Process.Release()
	return k.status, true
}

// handOver gives a started node's process to Run's reaper, which reports
// its exit to Run; false when no Run is under way.
func (rp *Reaper) handOver(cmd *exec.Cmd) bool {
	if rp == nil {
		return false
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	k := rp.kids[cmd.Process.Pid]
	if k == nil {
		return false
	}
	k.handed = true
	select {
	case <-k.done: // reaped already
		delete(rp.kids, cmd.Process.Pid)
		rp.post(NodeExit{cmd.Process.Pid, k.status})
	default:
	}
	cmd.Process.Release()
	return true
}

// RunCheck runs cmd, a check's command (package ready's exec:), to its
// end, and SIGKILLs it if ctx ends first ([ready.Runner]). Under Run the
// status comes from the reaper, the one waiter of every child: a wait of
// cmd's own would race the reaper's wait4(-1) and lose it (go-reaper#2),
// failing a healthy node's check. The error reads as exec.Cmd.Run's.
func (rp *Reaper) RunCheck(ctx context.Context, cmd *exec.Cmd) (int, error) {
	if rp == nil {
		return 0, errors.New("no reaper: not under a run")
	}
	if err := rp.startChild(cmd); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	rp.mu.Lock()
	k := rp.kids[pid]
	rp.mu.Unlock()
	select {
	case <-k.done:
	case <-ctx.Done():
		rp.SignalKid(pid, syscall.SIGKILL) // not reaped yet: ours
		<-k.done
	}
	ws, _ := rp.waitReaped(cmd)
	switch {
	case ws.Signaled():
		return pid, fmt.Errorf("signal: %v", ws.Signal())
	case ws.ExitStatus() != 0:
		return pid, fmt.Errorf("exit status %d", ws.ExitStatus())
	}
	return pid, nil
}

// SignalKid sends sig to pid, a child started through the reaper, only
// while it is not reaped: until then its pid cannot be another process's.
// Reaping waits meanwhile (forkMu), so the check holds until the signal
// is sent. For a node whose lock cannot be reached (see run.stopDirect).
func (rp *Reaper) SignalKid(pid int, sig syscall.Signal) error {
	rp.forkMu.RLock()
	defer rp.forkMu.RUnlock()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	k := rp.kids[pid]
	if k == nil {
		return pin.ErrNotRunning
	}
	select {
	case <-k.done:
		return pin.ErrNotRunning
	default:
	}
	if pid <= 1 || pid == os.Getpid() {
		return fmt.Errorf("%w %d", pin.ErrUnsafePID, pid)
	}
	return syscall.Kill(pid, sig)
}
