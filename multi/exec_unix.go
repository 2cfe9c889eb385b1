//go:build unix

package multi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

// logTailFlags opens a logfile to read its last lines: never through a
// link, never hanging on a FIFO.
const logTailFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// stepEnv marks a process started as the exec step of one node. The step
// removes it before it execs the node's command, so nodes never see it.
const stepEnv = "_MULTI_EXEC_STEP_V1"

// errFD is the exec step's descriptor for reporting failure: the write end
// of a pipe whose read end the launcher drains. It is close-on-exec in the
// step, so a successful exec closes it with nothing written.
const errFD = 3

// The values of stepEnv: the step locks the pidfile, or the node will.
const (
	stepLock     = "1"
	stepSelfLock = "self"
)

func init() {
	if v := os.Getenv(stepEnv); v == stepLock || v == stepSelfLock {
		execStep(os.Args[1:], v == stepSelfLock) // does not return
	}
}

// execStep is the node's own process before it becomes the node: it locks
// the pidfile, opens the logfile and execs the command, keeping the locked
// descriptor open across the exec. args are PIDFILE LOGFILE -- ARGV...
// With selfLock the step leaves the pidfile alone: the node locks it.
func execStep(args []string, selfLock bool) {
	report := os.NewFile(errFD, "multi-report")
	syscall.CloseOnExec(errFD)
	os.Unsetenv(stepEnv)
	// The node gets the GOMAXPROCS it would have had.
	if v, ok := os.LookupEnv(stepProcsEnv); ok {
		os.Unsetenv(stepProcsEnv)
		if v == "" {
			os.Unsetenv("GOMAXPROCS")
		} else {
			os.Setenv("GOMAXPROCS", v[1:])
		}
	}
	fail := func(kind string, err error) {
		fmt.Fprintf(report, "%s %s", kind, err)
		os.Exit(1)
	}
	if len(args) < 4 || args[2] != "--" {
		fail("fail", errors.New("exec step: bad arguments"))
	}
	pidPath, logfile, argv := args[0], args[1], args[3:]
	// Run mode (see [Cluster.Run]): output to the inherited pipes, and a
	// held lock waited for.
	inherit, standby := os.Getenv(stepOutEnv) != "", os.Getenv(stepStandbyEnv) != ""
	os.Unsetenv(stepOutEnv)
	os.Unsetenv(stepStandbyEnv)

	var lock *pidfile.Lock
	if selfLock {
		// The node will lock it; a running instance is refused here all
		// the same, before anything starts.
		if info, err := pidfile.Inspect(pidPath); err != nil {
			fail("fail", err)
		} else if info.State == pidfile.Foreign {
			fail("foreign", info.LockErr)
		} else if info.State == pidfile.Running || info.State == pidfile.Elsewhere {
			fail("held", errors.New(strconv.Itoa(info.PID)))
		}
	} else {
		var err error
		lock, err = pidfile.Acquire(pidPath)
		var held *pidfile.HeldError
		for standby && errors.As(err, &held) && awaitLockFree(pidPath) {
			lock, err = pidfile.Acquire(pidPath)
		}
		if errors.As(err, &held) {
			fail("held", errors.New(strconv.Itoa(held.PID)))
		}
		if errors.Is(err, pidfile.ErrForeignLock) {
			fail("foreign", err)
		}
		if err != nil {
			fail("fail", err)
		}
	}
	// From here on the pidfile is ours: remove it on any failure.
	failLocked := func(err error) {
		if lock != nil {
			lock.Release()
		}
		fail("fail", err)
	}
	// A command that cannot be run says why in a kind of its own, for the
	// exit codes 127 and 126 of [Cluster.Run].
	failExec := func(err error) {
		if lock != nil {
			lock.Release()
		}
		fail(execFailKind(err), err)
	}
	path, err := exec.LookPath(argv[0])
	if errors.Is(err, exec.ErrDot) {
		// An empty or "." element of $PATH would run whatever was planted
		// in the working folder (Go's exec.ErrDot rule): never. A command
		// with a slash never gets here; ./prog runs as given.
		abs, _ := filepath.Abs(path)
		failLocked(fmt.Errorf("exec: %q: not run from the working folder (%s) through an empty or \".\" element of $PATH; write ./%s to run it", argv[0], abs, argv[0]))
	}
	if err != nil {
		failExec(err)
	}
	if p := os.Getenv(stepWaitEnv); p != "" {
		// Tests stop the step here, its pidfile locked, to kill multi
		// start at this point: the open waits for a reader of the FIFO.
		os.Unsetenv(stepWaitEnv)
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
	if !inherit {
		// Opened as root, so as carefully as the pidfile: no link followed.
		log, err := nodes.OpenLogfile(logfile)
		if err != nil {
			failLocked(err)
		}
		if err := dup2(int(log.Fd()), 1); err != nil {
			failLocked(fmt.Errorf("logfile %s: %w", logfile, err))
		}
		if err := dup2(int(log.Fd()), 2); err != nil {
			failLocked(fmt.Errorf("logfile %s: %w", logfile, err))
		}
		log.Close()
	}
	os.Setenv(pidfile.EnvPidfile, pidPath)
	os.Unsetenv(pidfile.EnvPidfileFD)
	if lock != nil {
		// The lock must survive the exec: clear close-on-exec on its fd only.
		fd := int(lock.File().Fd())
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			failLocked(fmt.Errorf("pidfile %s: %w", pidPath, err))
		}
		os.Setenv(pidfile.EnvPidfileFD, strconv.Itoa(fd))
	}
	err = syscall.Exec(path, argv, os.Environ())
	failExec(&exec.Error{Name: argv[0], Err: err})
}

// stepWaitEnv names a FIFO the exec step opens, and so waits on, before
// it opens the logfile: only for tests that kill multi start there.
const stepWaitEnv = "_MULTI_TEST_STEP_WAIT"

// stepProcsEnv carries the GOMAXPROCS the node is to have ("" for none,
// else "=" and the value): the step runs with GOMAXPROCS=1, since a Go
// runtime starts faster with one P, and it lives only until the exec.
const stepProcsEnv = "_MULTI_GOMAXPROCS"

// stepEnviron is the exec step's environment: the node's, plus what the
// step needs.
func stepEnviron(env []string, step string, n nodes.Node) []string {
	procs := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
			procs = "=" + v // the last one is the one that counts
		}
	}
	return append(env[:len(env):len(env)], stepEnv+"="+step, nodes.EnvNode+"="+n.FullName(),
		stepProcsEnv+"="+procs, "GOMAXPROCS=1")
}

// spawn starts node n through the exec step and returns it once the node
// has exec'd its command holding its lock, or the reason it did not. A
// self-locking node is given up to lockTimeout to take its lock. The child
// is still this process's, unreaped: the caller checks it again when the
// settle window ends ([child.recheck]) and then lets it go.
func spawn(n nodes.Node, env []string, lockTimeout time.Duration) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program to re-execute: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ch := &child{node: n, born: time.Now()}
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
		Dir:         n.Dir,
		ExtraFiles:  []*os.File{w},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	started := prepareRun(cmd, n)
	err = startChild(cmd)
	w.Close()
	started(err)
	if err != nil {
		return nil, err
	}
	ch.cmd, ch.pid = cmd, cmd.Process.Pid
	msg, _ := io.ReadAll(r)
	if len(msg) > 0 {
		waitChild(cmd)
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
			return nil, &stepError{msg: string(text), is: ErrForeignLock}
		}
		return nil, errors.New(string(text))
	}
	// The pipe closed with nothing said: the exec happened, or the step
	// died without a word. The lock tells which, and whether the command
	// is still running.
	if n.SelfLock {
		_, err = awaitOwnLock(cmd, n, lockTimeout)
	} else {
		_, err = ch.confirm()
	}
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// letGo hands the child over: reaped when it exits, or with detach
// released at once.
func (ch *child) letGo(detach bool) {
	if handOver(ch.cmd) {
		return // to Run's reaper
	}
	if detach {
		ch.cmd.Process.Release()
	} else {
		reap(ch.cmd)
	}
}

// recheck confirms, at the end of the settle window, that the child still
// runs holding its lock (a self-locking node's holder may be a process of
// its session); otherwise it is dealt with as confirm does.
func (ch *child) recheck() error {
	if ch.node.SelfLock {
		info, err := pidfile.Inspect(ch.node.PidFile)
		if err == nil && info.State == pidfile.Running && info.PID > 0 {
			if sid, _ := unix.Getsid(info.PID); info.PID == ch.pid || sid == ch.pid {
				return nil
			}
		}
	}
	_, err := ch.confirm()
	return err
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
	ch := &child{node: n, cmd: cmd, pid: cmd.Process.Pid, logOff: -1}
	return ch.confirm()
}

func (ch *child) confirm() (*os.Process, error) {
	cmd, n := ch.cmd, ch.node
	info, err := pidfile.Inspect(n.PidFile)
	if err == nil && info.State == pidfile.Running && info.PID == cmd.Process.Pid {
		return cmd.Process, nil
	}
	killed := false
	if !exited(cmd.Process.Pid) {
		killed = cmd.Process.Signal(syscall.SIGKILL) == nil
	}
	ws, werr := waitChild(cmd)
	if werr != nil {
		return nil, werr
	}
	pidfile.RemoveStale(n.PidFile) // left behind, unlocked; a new holder's is kept
	if killed && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return nil, fmt.Errorf("%w; killed it (pid %d; see %s)", errLockDropped, cmd.Process.Pid, seeLog(cmd, n))
	}
	msg := fmt.Sprintf("(%s; see %s)", describeExit(ws), seeLog(cmd, n))
	if ch.logOff >= 0 && cmd.Stdout == nil {
		if tail := logTail(n.LogFile, ch.logOff, tailLines); tail != "" {
			msg += "; its log ends: " + tail
		}
	}
	// The session is the node's (the step's setsid): what remains of it
	// was forked by the command, which then exited: a daemon. It is not
	// signalled: nothing says it is ours to stop.
	if left, _ := nodes.SessionMembers(cmd.Process.Pid); len(left) > 0 {
		var names []string
		for _, p := range left {
			names = append(names, fmt.Sprintf("pid %d (%s)", p.PID, p.Comm))
		}
		msg += fmt.Sprintf("; processes of its session remain: %s; the command seems to daemonize itself: run it in the foreground (not signalled)",
			strings.Join(names, ", "))
	}
	return nil, &exitError{status: ws, err: fmt.Errorf("%w %s", ErrExitedAtOnce, msg)}
}

// seeLog is where the node's output went: its logfile, or under Run,
// which pipes it (cmd.Stdout is set then), Run's output.
func seeLog(cmd *exec.Cmd, n nodes.Node) string {
	if cmd.Stdout != nil {
		return "its output above"
	}
	return n.LogFile
}

// describeExit says how a process ended: "exit status 3", "killed by KILL".
func describeExit(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// waitChild waits for cmd's process, this process's child, to exit and
// returns how it ended. Under [Cluster.Run] the run's reaper is the only
// waiter of the process and hands the status over.
func waitChild(cmd *exec.Cmd) (syscall.WaitStatus, error) {
	if ws, ok := waitReaped(cmd); ok {
		return ws, nil
	}
	st, err := cmd.Process.Wait()
	if err != nil {
		return 0, err
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	return ws, nil
}

// execFailKind is how the exec step reports a command it cannot run:
// "noent" (exit code 127 under run), "noexec" (126), or "fail".
func execFailKind(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "noent"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return "noexec"
	}
	return "fail"
}
