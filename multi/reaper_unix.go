//go:build unix

package multi

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/multi-launcher/multi/internal/pin"

	"github.com/multi-launcher/multi/nodes"
)

// noFollow opens a file without following a link.
const noFollow = syscall.O_NOFOLLOW

// A reaper is the one waiter of a running [Cluster.Run]: a wait4(-1) loop
// woken by SIGCHLD that reaps every child, nodes and orphans alike. Mixing
// such a loop with exec.Cmd.Wait would let one steal the other's children
// (go-reaper#2), so under Run nothing else waits: spawn, confirm and the
// settle checks get a node's status from the reaper ([waitChild]), and a
// node let go is handed over to it ([handOver]).
//
// Forking and reaping exclude each other (forkMu): a child is registered
// before the reaper can reap it, so its status is never taken for an
// orphan's.
type reaper struct {
	forkMu sync.RWMutex

	mu      sync.Mutex
	kids    map[int]*kid
	exits   []nodeExit // statuses of handed-over nodes, for Run
	wake    chan struct{}
	orphans int // orphans reaped: not ours, collected all the same

	// prepare, if set, readies a node's exec step before its start; the
	// function it returns learns whether the start worked.
	prepare func(cmd *exec.Cmd, n nodes.Node) func(error)
	// standby, if set, reports whether a start of n waits for its lock
	// (--wait-for-lock) for as long as it takes.
	standby func(n nodes.Node) bool
}

// A kid is a child started through the reaper.
type kid struct {
	done   chan struct{} // closed once reaped
	status syscall.WaitStatus
	handed bool // let go: its exit goes to Run
}

// nodeExit is a node's process that ended.
type nodeExit struct {
	pid    int
	status syscall.WaitStatus
}

// active is the reaper of the Run under way in this process, if any:
// reaping is process-wide, so there is at most one.
var active atomic.Pointer[reaper]

func newReaper() *reaper {
	return &reaper{kids: map[int]*kid{}, wake: make(chan struct{}, 1)}
}

// reapAll reaps every child that has exited, without blocking.
func (rp *reaper) reapAll() {
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
				rp.post(nodeExit{pid, ws})
			}
		}
		rp.mu.Unlock()
	}
}

// post queues a node's exit for Run; rp.mu is held.
func (rp *reaper) post(e nodeExit) {
	rp.exits = append(rp.exits, e)
	select {
	case rp.wake <- struct{}{}:
	default:
	}
}

// takeExits returns the node exits queued since the last call.
func (rp *reaper) takeExits() []nodeExit {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	e := rp.exits
	rp.exits = nil
	return e
}

// startChild starts cmd; under Run, registered with the reaper before the
// reaper can reap it.
func startChild(cmd *exec.Cmd) error {
	rp := active.Load()
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
func prepareRun(cmd *exec.Cmd, n nodes.Node) func(error) {
	rp := active.Load()
	if rp == nil || rp.prepare == nil {
		return func(error) {}
	}
	return rp.prepare(cmd, n)
}

// standbyStart reports whether the start of n under way waits for its
// lock for as long as it takes (Run's standby).
func standbyStart(n nodes.Node) bool {
	rp := active.Load()
	return rp != nil && rp.standby != nil && rp.standby(n)
}

// waitReaped waits for cmd's process through Run's reaper, if Run is under
// way and started it.
func waitReaped(cmd *exec.Cmd) (syscall.WaitStatus, bool) {
	rp := active.Load()
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
func handOver(cmd *exec.Cmd) bool {
	rp := active.Load()
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
		rp.post(nodeExit{cmd.Process.Pid, k.status})
	default:
	}
	cmd.Process.Release()
	return true
}

// signalKid sends sig to pid, a child started through the reaper, only
// while it is not reaped: until then its pid cannot be another process's.
// Reaping waits meanwhile (forkMu), so the check holds until the signal
// is sent. For a node whose lock cannot be reached (see run.stopDirect).
func (rp *reaper) signalKid(pid int, sig syscall.Signal) error {
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
		return fmt.Errorf("%w %d", ErrUnsafePID, pid)
	}
	return syscall.Kill(pid, sig)
}
