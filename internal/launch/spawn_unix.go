//go:build unix

package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/safefs"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Spawn starts node n, forked directly where it can be (spawnDirect) or
// through the exec step, and returns it once the node has exec'd its
// command holding its lock, or the reason it did not. A
// self-locking node is given up to lockTimeout to take its lock, and no
// longer than ctx lasts. The child
// is still this process's, unreaped: the caller checks it again when the
// settle window ends ([child.recheck]) and then lets it go.
func Spawn(ctx context.Context, rp *Reaper, n nodes.Node, env []string, lockTimeout time.Duration) (*Child, error) {
	self, err := selfExe()
	if err != nil {
		return nil, err
	}
	if _, err := n.Limits.Rlimits(); err != nil {
		return nil, err // a record not written by multi: nothing to start with
	}
	done, err := tasks.take(stepTasks)
	if err != nil {
		return nil, err
	}
	ch, err := spawnDirect(ctx, rp, n, env)
	if err == errUseStep {
		ch, err = spawnStep(ctx, rp, n, env, lockTimeout, self)
	}
	// Nothing started for want of a descriptor: which says nothing about
	// the node; under a low RLIMIT_NOFILE those another start or a stop's
	// waits hold (restart) come free as they end.
	if isNoFD(err) && ctx.Err() == nil {
		err = fdwait.Retry(func() (err error) {
			ch, err = spawnStep(ctx, rp, n, env, lockTimeout, self)
			return err
		}, isNoFD)
	}
	done(err == nil)
	return ch, withLimitHint(err)
}

// spawnStep is Spawn through the exec step, the program self.
func spawnStep(ctx context.Context, rp *Reaper, n nodes.Node, env []string, lockTimeout time.Duration, self string) (*Child, error) {
	extra := []*os.File{nil}
	if n.Dir != "" {
		// The step changes to the folder the walk reached (see stepDirEnv).
		wd, err := OpenWorkDir(n)
		if err != nil {
			return nil, err // EMFILE included: the walk says which folder
		}
		defer wd.Close()
		extra = append(extra, wd)
	}
	cgfd := ""
	if n.Cgroup != "" {
		// Made by the caller; the step joins it (see stepCgroupEnv).
		cg, err := cgroup.Open(n.Cgroup)
		if err != nil {
			return nil, err
		}
		defer cg.Close()
		extra = append(extra, cg)
		cgfd = stepCgroupEnv + "=" + strconv.Itoa(errFD+len(extra)-1)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	extra[0] = w
	ch := &Child{node: n, born: time.Now(), bornTicks: proc.NowTicks(), rp: rp}
	if extra, env, err = ch.readyPipe(extra, env); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	ok := false
	defer func() {
		if ch.readyW != nil {
			ch.readyW.Close() // the node's is then the only writer
		}
		if !ok && ch.readyR != nil {
			ch.readyR.Close()
		}
	}()
	if st, err := os.Stat(n.LogFile); err == nil {
		ch.logOff = st.Size() // the log is appended to: show only this run's lines
	}
	defer r.Close()
	step := stepLock
	if n.SelfLock {
		step = stepSelfLock
	}
	cmd := &exec.Cmd{
		Path:        self,
		Args:        append([]string{"multi: exec " + n.Name, n.PidFile, n.LogFile, "--"}, n.Command...),
		Env:         stepEnviron(env, step, n),
		ExtraFiles:  extra,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if cgfd != "" {
		cmd.Env = append(cmd.Env, cgfd)
	}
	started := rp.prepareRun(cmd, n)
	if cmd.Stdout == nil {
		// One /dev/null for every start, not three opens per node: a
		// start under a low RLIMIT_NOFILE beside a stop's waits (restart)
		// must not run out.
		null, err := devNull()
		if err != nil {
			started(err)
			return nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	}
	// A logfile kept under a size is written by the node's log writer:
	// the node's stdout and stderr are a pipe to it.
	var logR, logW *os.File
	if _, _, ok := n.Limits.LogRotation(); ok && !piped(cmd) {
		// The logfile as the writer will open it, checked before
		// anything starts: the step would have refused it too.
		var f *os.File
		if f, err = safefs.OpenLogfile(n.LogFile); err != nil {
			started(err)
			return nil, err
		}
		f.Close()
		if logR, logW, err = os.Pipe(); err != nil {
			started(err)
			return nil, err
		}
		defer logR.Close()
		deepen(logW)
		cmd.ExtraFiles = append(cmd.ExtraFiles, logW)
		cmd.Env = append(cmd.Env, stepLogFDEnv+"="+strconv.Itoa(errFD+len(cmd.ExtraFiles)-1))
	}
	err = rp.startChild(cmd)
	w.Close()
	if logW != nil {
		logW.Close() // the node's copy is then the only writer
	}
	started(err)
	if err != nil {
		return nil, forkErr(err)
	}
	ch.cmd, ch.pid = cmd, cmd.Process.Pid
	msg, _ := io.ReadAll(r)
	if len(msg) == 0 && logR != nil {
		if err := ch.startLogWriter(logR, self); err != nil {
			// The node runs, and nothing reads its output: it must not
			// run on unlogged. It is this process's unreaped child.
			cmd.Process.Signal(syscall.SIGKILL)
			rp.waitChild(cmd)
			pidfile.RemoveStale(n.PidFile)
			return nil, fmt.Errorf("log writer for %s: %w", n.LogFile, err)
		}
	}
	if len(msg) > 0 {
		rp.waitChild(cmd)
		kind, text, _ := bytes.Cut(msg, []byte(" "))
		switch string(kind) {
		case "noent":
			return nil, &stepError{msg: string(text), is: ErrCommandNotFound}
		case "noexec":
			return nil, &stepError{msg: string(text), is: ErrCommandNotExecutable}
		}
		if string(kind) == "held" {
			pid, _ := strconv.Atoi(string(text))
			return nil, &pidfile.HeldError{Path: n.PidFile, PID: pid}
		}
		if string(kind) == "foreign" {
			return nil, &stepError{msg: string(text), is: pidfile.ErrForeignLock}
		}
		return nil, errors.New(string(text))
	}
	// The pipe closed with nothing said: the exec happened, or the step
	// died without a word. The lock tells which, and whether the command
	// is still running.
	if n.SelfLock {
		_, err = awaitOwnLock(ctx, rp, cmd, n, lockTimeout)
	} else {
		_, err = ch.confirm()
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return ch, nil
}

// procSelfExe is this process's own program, as the kernel knows it: it
// names the very file this process runs even once that file has been
// deleted or replaced at its path.
const procSelfExe = "/proc/self/exe"

// selfExe is the program the exec step re-executes: /proc/self/exe where
// there is one (Linux), so that a binary deleted or replaced in place (a
// deploy) still starts its nodes as the running version; elsewhere the
// program's path, which must then stay valid.
func selfExe() (string, error) {
	if _, err := os.Stat(procSelfExe); err == nil {
		return procSelfExe, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this program to re-execute: %w", err)
	}
	return self, nil
}

// LetGo hands the child over: reaped when it exits, or with detach
// released at once.
func (ch *Child) LetGo(detach bool) {
	if ch.rp.handOver(ch.cmd) {
		return // to Run's reaper
	}
	if detach {
		ch.cmd.Process.Release()
	} else {
		reap(ch.cmd)
	}
}

// Recheck confirms, at the end of the settle window, that the child still
// runs holding its lock (a self-locking node's holder may be a process of
// its session); otherwise it is dealt with as confirm does.
func (ch *Child) Recheck() error {
	if ch.node.SelfLock {
		info, err := pidfile.Inspect(ch.node.PidFile)
		if err == nil && info.State == pidfile.Running && info.PID > 0 {
			if sid, _ := unix.Getsid(info.PID); info.PID == ch.pid || sid == ch.pid {
				return nil
			}
		}
	}
	_, err := ch.confirm()
	return withLimitHint(err)
}

// stepError is a failure the exec step reported, with the error it
// matches.
type stepError struct {
	msg string
	is  error
}

func (e *stepError) Error() string { return e.msg }
func (e *stepError) Unwrap() error { return e.is }

// errLockDropped: the node's command runs but does not hold its pidfile's
// lock, so no later multi could ever see or stop it.
var errLockDropped = errors.New("let go of its pidfile's lock while running (a node must keep the descriptor in $MULTI_PIDFILE_FD open, and must not daemonize)")

// confirm returns cmd's process if it holds n's pidfile lock. Otherwise the
// command has exited, or it runs without the lock: it closed the inherited
// descriptor, say. Such a process could never be stopped through its lock,
// so confirm kills it (it is this process's own unreaped child, so the pid
// cannot name another process), waits for it, removes the stale pidfile and
// says why. It never blocks on a command that keeps running.
func confirm(cmd *exec.Cmd, n nodes.Node) (*os.Process, error) {
	ch := &Child{node: n, cmd: cmd, pid: cmd.Process.Pid, logOff: -1}
	return ch.confirm()
}

func (ch *Child) confirm() (*os.Process, error) {
	cmd, n := ch.cmd, ch.node
	// No descriptor to look with says nothing about the node: never a
	// reason to kill it. Wait for one, as a start does.
	var info pidfile.Info
	err := RetryFDs(func() (err error) {
		info, err = pidfile.Inspect(n.PidFile)
		return err
	})
	if err == nil && info.State == pidfile.Running && info.PID == cmd.Process.Pid {
		return cmd.Process, nil
	}
	killed := false
	if !exited(cmd.Process.Pid) && !onItsWay(cmd.Process.Pid, err == nil && info.State == pidfile.Absent) {
		killed = cmd.Process.Signal(syscall.SIGKILL) == nil
	}
	ws, werr := ch.rp.waitChild(cmd)
	if werr != nil {
		return nil, werr
	}
	pidfile.RemoveStale(n.PidFile) // left behind, unlocked; a new holder's is kept
	if killed && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return nil, fmt.Errorf("%w; killed it (pid %d; see %s)", errLockDropped, cmd.Process.Pid, seeLog(cmd, n))
	}
	msg := fmt.Sprintf("(%s; see %s)", DescribeExit(ws), seeLog(cmd, n)) + ch.logEnds()
	// What remains of its tree was forked by the command, which then
	// exited: a daemon.
	if left := ch.leftBehind(); left != "" {
		msg += "; the command seems to daemonize itself: run it in the foreground; " + left
	}
	return nil, &ExitError{Status: ws, PID: cmd.Process.Pid, Err: fmt.Errorf("%w %s", ErrExitedAtOnce, msg)}
}

// onItsWay reports whether pid, this process's unreaped child whose lock
// is not held (its pidfile gone, if released), was on its way out and has exited, waited for as
// [pin.WaitOnItsWay] does: a node that has begun to exit, or has released its
// lock and removed its pidfile (a self-locking node's Lock.Release) just
// before it exits, stopped in its settle window by someone else. Such a
// node is not killed mid-exit.
func onItsWay(pid int, released bool) bool {
	p, err := proc.Read(pid)
	if err != nil {
		return false
	}
	return pin.WaitOnItsWay(context.Background(), nodes.Started{PID: pid, StartTicks: p.StartTicks}, p, released, pin.GoneWait)
}

// seeLog is where the node's output went: its logfile, or under Run,
// which pipes it (cmd.Stdout is set then), Run's output.
func seeLog(cmd *exec.Cmd, n nodes.Node) string {
	if piped(cmd) {
		return "its output above"
	}
	return n.LogFile
}

// waitChild waits for cmd's process, this process's child, to exit and
// returns how it ended. Under [Cluster.Run] the run's reaper is the only
// waiter of the process and hands the status over.
func (rp *Reaper) waitChild(cmd *exec.Cmd) (syscall.WaitStatus, error) {
	if ws, ok := rp.waitReaped(cmd); ok {
		return ws, nil
	}
	st, err := cmd.Process.Wait()
	if err != nil {
		return 0, err
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	return ws, nil
}

// devNull is /dev/null, opened once for the standard descriptors of every
// exec step (the step points 1 and 2 at the logfile itself).
var devNull = sync.OnceValues(func() (*os.File, error) { return os.OpenFile(os.DevNull, os.O_RDWR, 0) })

// piped reports whether cmd's output goes to a run's pipes rather than
// to /dev/null, which the step replaces with the logfile.
func piped(cmd *exec.Cmd) bool {
	null, _ := devNull()
	return cmd.Stdout != nil && cmd.Stdout != null
}

// isNoFD reports whether err is EMFILE or ENFILE from before the step
// started: a pipe or the fork.
func isNoFD(err error) bool {
	var pe *os.PathError
	var se *os.SyscallError
	// EBADF from fork/exec: the child could not move a descriptor below
	// the limit (dup3 past RLIMIT_NOFILE), no fault of the node's.
	forkBadFD := errors.As(err, &pe) && pe.Op == "fork/exec" && errors.Is(err, syscall.EBADF)
	return forkBadFD || (errors.As(err, &pe) && pe.Op == "fork/exec" || errors.As(err, &se) && se.Syscall == "pipe2" || errors.As(err, &se) && se.Syscall == "pipe") &&
		(errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE))
}

// directSpawn says whether a detached start forks its nodes' processes
// directly (spawnDirect) where it can; tests turn it off to start
// through the exec step.
var directSpawn = true

// directTaken counts the starts spawnDirect did not hand to the exec
// step (the node runs, or failed after its child took the lock), for
// tests.
var directTaken atomic.Int64

// errUseStep: start this node through the exec step.
var errUseStep = errors.New("start through the exec step")
