//go:build unix

package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

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
	nameStep()
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
	// The $PATH to look the command up on, which the node's environment
	// may not have (see [LookPATH]).
	lookup, hasLookup := os.LookupEnv(stepPathEnv)
	os.Unsetenv(stepPathEnv)
	if hasLookup {
		lookup, hasLookup = strings.CutPrefix(lookup, "=")
	}
	fail := func(kind string, err error) {
		fmt.Fprintf(report, "%s %s", kind, err)
		os.Exit(1)
	}
	if len(args) < 4 || args[2] != "--" {
		fail("fail", errors.New("exec step: bad arguments"))
	}
	pidPath, logfile, argv := args[0], args[1], args[3:]
	// The folders the launcher accepted (--allow-shared-folders); only
	// a node that locks its own pidfile reaches them too.
	nodes.AcceptSharedFromEnv()
	if !selfLock {
		os.Unsetenv(nodes.SharedEnv)
	}
	if os.Getenv(stepDirEnv) != "" {
		// The working folder, as the launcher's walk reached it: never a
		// path a link could have replaced since.
		os.Unsetenv(stepDirEnv)
		if err := unix.Fchdir(dirFD); err != nil {
			fail("fail", fmt.Errorf("working folder: %w", err))
		}
		unix.Close(dirFD)
	}
	readyFD := -1
	if v, ok := os.LookupEnv(stepReadyEnv); ok {
		os.Unsetenv(stepReadyEnv)
		var err error
		if readyFD, err = moveReadyFD(v, &report); err != nil {
			fail("fail", err)
		}
	}
	// Run mode (see [Cluster.Run]): output to the inherited pipes, and a
	// held lock waited for.
	inherit, standby := os.Getenv(StepOutEnv) != "", os.Getenv(StepStandbyEnv) != ""
	os.Unsetenv(StepOutEnv)
	os.Unsetenv(StepStandbyEnv)

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
		for standby && errors.As(err, &held) && AwaitLockFree(pidPath) {
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
	// The node's cgroup, joined before anything of the node runs: no
	// process it forks is outside it.
	if v := os.Getenv(stepCgroupEnv); v != "" {
		os.Unsetenv(stepCgroupEnv)
		fd, _ := strconv.Atoi(v)
		if err := cgroup.Join(fd); err != nil {
			failLocked(fmt.Errorf("cgroup: %w", err))
		}
		unix.Close(fd)
	}
	// A command that cannot be run says why in a kind of its own, for the
	// exit codes 127 and 126 of [Cluster.Run].
	failExec := func(err error) {
		if lock != nil {
			lock.Release()
		}
		fail(execFailKind(err), err)
	}
	path, err := lookCommand(argv[0], lookup, hasLookup)
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
	if h := testhooks.StepWait; h != nil {
		h() // tests stop the step here, its pidfile locked
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
	closeInherited()
	if lock != nil {
		// The lock must survive the exec: clear close-on-exec on its fd only.
		fd := int(lock.File().Fd())
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			failLocked(fmt.Errorf("pidfile %s: %w", pidPath, err))
		}
		os.Setenv(pidfile.EnvPidfileFD, strconv.Itoa(fd))
	}
	if readyFD >= 0 {
		// The node's readiness descriptor (fd:N) survives the exec too.
		if _, err := unix.FcntlInt(uintptr(readyFD), unix.F_SETFD, 0); err != nil {
			failLocked(fmt.Errorf("--ready=fd:%d: %w", readyFD, err))
		}
	}
	defaultSignals()
	err = syscall.Exec(path, argv, os.Environ())
	failExec(&exec.Error{Name: argv[0], Err: err})
}

// defaultSignals readies this process to exec a node that starts with
// no signal ignored and (where the system lets a thread say so) none
// blocked, whatever the caller of multi ignored or blocked. A signal
// ignored is caught instead, which the exec resets to its default.
// The calling goroutine stays on its thread, so that the exec happens
// with the mask set here.
func defaultSignals() {
	runtime.LockOSThread()
	drop := make(chan os.Signal, 1)
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if sig != syscall.SIGKILL && sig != syscall.SIGSTOP && signal.Ignored(sig) {
			signal.Notify(drop, sig)
		}
	}
	unblockSignals()
}

// closeInherited marks every descriptor from 3 on close-on-exec, so that
// the node keeps none that multi's caller passed down: a node holding its
// caller's pipe would keep a reader
// of multi's output waiting. The lock's descriptor is kept open after
// this. Where /dev/fd lists only 0-2 (FreeBSD without fdescfs), the others
// are left as they are.
func closeInherited() {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 {
			syscall.CloseOnExec(fd)
		}
	}
}

// stepDirEnv says the exec step has its node's working folder open as
// dirFD, to change to.
const stepDirEnv = "_MULTI_STEP_DIR"

// dirFD is the working folder's descriptor in the exec step, after errFD.
const dirFD = errFD + 1

// stepCgroupEnv names the descriptor of the node's cgroup folder in the
// exec step, which it joins once it holds the lock.
const stepCgroupEnv = "_MULTI_STEP_CGROUP"

// stepPathEnv carries the $PATH the step looks the command up on ("" for
// none, else "=" and the value).
const stepPathEnv = "_MULTI_LOOKUP_PATH"

// lookCommand is exec.LookPath(name) on the $PATH lookup (none unless ok),
// whatever $PATH the node's own environment has, which it keeps.
func lookCommand(name, lookup string, ok bool) (string, error) {
	own, hadOwn := os.LookupEnv("PATH")
	if ok {
		os.Setenv("PATH", lookup)
	} else {
		os.Unsetenv("PATH")
	}
	defer func() {
		if hadOwn {
			os.Setenv("PATH", own)
		} else {
			os.Unsetenv("PATH")
		}
	}()
	return exec.LookPath(name)
}

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
	lookup := ""
	if p, ok := LookPATH(env); ok {
		lookup = "=" + p
	}
	out := append(env[:len(env):len(env)], stepEnv+"="+step, nodes.EnvNode+"="+n.FullName(),
		stepProcsEnv+"="+procs, stepPathEnv+"="+lookup, "GOMAXPROCS=1")
	if n.Dir != "" {
		out = append(out, stepDirEnv+"=1")
	}
	if shared := nodes.AcceptedShared(); shared != "" {
		// The folders the step, and a node that locks its own pidfile,
		// reach as this process accepted them.
		out = append(out, nodes.SharedEnv+"="+shared)
	}
	return out
}

// The exec step's run mode (see execStep): StepOutEnv keeps the inherited
// stdout and stderr (Run's pipes) instead of opening the logfile;
// StepStandbyEnv waits for a held lock instead of failing.
const (
	StepOutEnv     = "_MULTI_STEP_INHERIT_OUTPUT"
	StepStandbyEnv = "_MULTI_STEP_WAIT_LOCK"
)

// AwaitLockFree blocks, in the kernel (F_SETLKW), until nobody holds a
// lock on the pidfile at path, then lets go at once: the caller then tries
// to take it as a node does. It reports false, at once, if the file cannot
// be opened (but for a missing file: nothing to wait for).
func AwaitLockFree(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|NoFollow, 0)
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
