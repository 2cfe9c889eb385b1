//go:build unix

package supervise

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/nodes/pidfile"

	"github.com/multi-launcher/multi/nodes"
)

// started takes in the result of a node's start.
func (r *run) started(rn *runNode, res Outcome) {
	rn.starting = false
	r.mu.Lock()
	delete(r.standby, rn.n.Name)
	r.mu.Unlock()
	if res.Err == nil {
		rn.pid, rn.since, rn.ran, rn.cgroup = res.PID, time.Now(), true, res.Cgroup
		r.byPID[rn.pid] = rn
		if st, ok := r.early[rn.pid]; ok {
			delete(r.early, rn.pid)
			r.nodeExited(launch.NodeExit{PID: rn.pid, Status: st})
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
	if errors.Is(res.Err, pidfile.ErrAlreadyRunning) && r.o.WaitForLock && !rn.stoodBy {
		// Once: the standby step waits in the kernel, and comes back
		// only with the lock or a failure.
		rn.stoodBy = true
		r.logf("%s: its lock is held by another process; waiting for it (--wait-for-lock)", rn.n.Name)
		r.standbyStart(rn)
		return
	}
	var ee *launch.ExitError
	if errors.As(res.Err, &ee) {
		r.onExit(rn, ee.Status, res.Err)
		return
	}
	// It cannot run here (no program, a lock held elsewhere, ...): no
	// policy makes that better.
	r.decide(launch.ErrExitCode(res.Err), res.Err)
	r.requestStop(rn.n.Name + " could not start")
}

// startNode starts rn in the background; the result comes back to the
// loop.
func (r *run) startNode(rn *runNode, word string) {
	rn.starting = true
	r.tag(rn)
	go func() {
		res := r.h.Start(context.Background(), r.rp, rn.n, word)
		r.post(func() { r.started(rn, res) })
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

// isStandby reports whether n is starting as a standby (the reaper's
// hook).
func (r *run) isStandby(n nodes.Node) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.standby[n.Name]
	return ok
}

// prepare readies a node's exec step (the reaper's hook, called in the
// starting goroutine): pipes for its output, a wait for its lock.
func (r *run) prepare(cmd *exec.Cmd, n nodes.Node) func(error) {
	r.mu.Lock()
	_, standby := r.standby[n.Name]
	r.mu.Unlock()
	if standby {
		cmd.Env = append(cmd.Env, launch.StepStandbyEnv+"=1")
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
			cmd.Env = append(cmd.Env, launch.StepOutEnv+"=1")
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
				go r.copyLines(r.o.Stdout, n.Name, "stdout", or)
				go r.copyLines(errw, n.Name, "stderr", er)
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

// copyLines copies a node's output to w, each line formatted by
// formatLine; a line too long for the buffer goes in pieces.
func (r *run) copyLines(w io.Writer, name, stream string, f *os.File) {
	defer r.out.Done()
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			buf = r.o.formatLine(buf[:0], time.Now(), name, stream, line)
			r.outMu.Lock()
			w.Write(buf)
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
