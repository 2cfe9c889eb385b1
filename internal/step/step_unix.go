//go:build unix

package step

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/logwriter"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

func init() {
	if v := os.Getenv(Env); v == Lock || v == SelfLock {
		execStep(os.Args[1:], v == SelfLock) // does not return
	}
	if os.Getenv(logwriter.Env) != "" {
		logwriter.Main(os.Args[1:]) // a node's log writer; does not return
	}
}

// execStep is the node's own process before it becomes the node: it locks
// the pidfile, opens the logfile and execs the command, keeping the locked
// descriptor open across the exec. args are PIDFILE LOGFILE -- ARGV...
// With selfLock the step leaves the pidfile alone: the node locks it.
func execStep(args []string, selfLock bool) {
	nameStep()
	report := os.NewFile(ErrFD, "multi-report")
	syscall.CloseOnExec(ErrFD)
	os.Unsetenv(Env)
	// The node gets the GOMAXPROCS it would have had.
	if v, ok := os.LookupEnv(ProcsEnv); ok {
		os.Unsetenv(ProcsEnv)
		if v == "" {
			os.Unsetenv("GOMAXPROCS")
		} else {
			os.Setenv("GOMAXPROCS", v[1:])
		}
	}
	// The $PATH to look the command up on, which the node's environment
	// may not have (see launch.LookPATH).
	lookup, hasLookup := os.LookupEnv(PathEnv)
	os.Unsetenv(PathEnv)
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
	// The pipe to the node's log writer, made its stdout and stderr
	// first, before any other descriptor moves: its number is free then.
	logPiped := false
	if v, ok := os.LookupEnv(LogFDEnv); ok {
		os.Unsetenv(LogFDEnv)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			fail("fail", fmt.Errorf("exec step: bad %s %q", LogFDEnv, v))
		}
		if err := dup2(fd, 1); err != nil {
			fail("fail", fmt.Errorf("log writer pipe: %w", err))
		}
		if err := dup2(fd, 2); err != nil {
			fail("fail", fmt.Errorf("log writer pipe: %w", err))
		}
		unix.Close(fd)
		logPiped = true
	}
	pidPath, logfile, argv := args[0], args[1], args[3:]
	// The folders the launcher accepted (--allow-shared-folders); only
	// a node that locks its own pidfile reaches them too.
	safefs.AcceptSharedFromEnv()
	if !selfLock {
		os.Unsetenv(safefs.SharedEnv)
	}
	if os.Getenv(DirEnv) != "" {
		// The working folder, as the launcher's walk reached it: never a
		// path a link could have replaced since.
		os.Unsetenv(DirEnv)
		if err := unix.Fchdir(DirFD); err != nil {
			fail("fail", fmt.Errorf("working folder: %w", err))
		}
		unix.Close(DirFD)
	}
	readyFD := -1
	if v, ok := os.LookupEnv(ReadyEnv); ok {
		os.Unsetenv(ReadyEnv)
		var err error
		if readyFD, err = moveReadyFD(v, &report); err != nil {
			fail("fail", err)
		}
	}
	// The node's rlimits, set last, right before the exec: a low
	// RLIMIT_AS or RLIMIT_NPROC would fail the Go runtime's next mmap or
	// thread in this process.
	var limits []Limit
	if v, ok := os.LookupEnv(LimitsEnv); ok {
		os.Unsetenv(LimitsEnv)
		var err error
		if limits, err = parseLimits(v); err != nil {
			fail("fail", err)
		}
	}
	// Run mode (multi run, [OutEnv], [StandbyEnv]): output to the inherited pipes, and a
	// held lock waited for.
	inherit, standby := os.Getenv(OutEnv) != "", os.Getenv(StandbyEnv) != ""
	os.Unsetenv(OutEnv)
	os.Unsetenv(StandbyEnv)

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
	// The node's cgroup, joined before anything of the node runs: no
	// process it forks is outside it.
	if v := os.Getenv(CgroupEnv); v != "" {
		os.Unsetenv(CgroupEnv)
		fd, _ := strconv.Atoi(v)
		if err := cgroup.Join(fd); err != nil {
			failLocked(fmt.Errorf("cgroup: %w", err))
		}
		unix.Close(fd)
	}
	// A command that cannot be run says why in a kind of its own, for the
	// exit codes 127 and 126 of multi run.
	failExec := func(err error) {
		if lock != nil {
			lock.Release()
		}
		fail(ExecFailKind(err), err)
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
	if !inherit && !logPiped {
		// Opened as root, so as carefully as the pidfile: no link followed.
		log, err := safefs.OpenLogfile(logfile)
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
	env := os.Environ()
	if err := setLimits(limits); err != nil {
		failLocked(err)
	}
	err = syscall.Exec(path, argv, env)
	failExec(&exec.Error{Name: argv[0], Err: err})
}

// defaultSignals readies this process to exec a node that starts with
// no signal ignored and (where the system lets a thread say so) none
// blocked, whatever the caller of multi ignored or blocked. A signal
// ignored is caught instead, which the exec resets to its default.
// The exec happens on the thread whose mask is set here: the step runs
// from a package's init, and Go runs every init on the main thread,
// locked to it (runtime.main), so no runtime.LockOSThread is needed, nor
// the thread it would start.
func defaultSignals() {
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
	if closeOnExecFrom3() {
		return
	}
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

// awaitLockFree blocks, in the kernel (F_SETLKW), until nobody holds a
// lock on the pidfile at path, then lets go at once: the caller then tries
// to take it as a node does. It reports false, at once, if the file cannot
// be opened (but for a missing file: nothing to wait for).
func awaitLockFree(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
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

// movedReport is the step's report File that fd 3 was, when the node's
// readiness pipe took that number.
var movedReport *os.File

// moveReadyFD, in the exec step, puts the readiness pipe where the node
// expects it, N, when the step had it elsewhere because N is the step's
// report pipe (ErrFD, moved away first) or its working folder's
// descriptor (DirFD, closed already) or its cgroup folder's (kept
// elsewhere for the join): only a descriptor of the step's own is
// replaced. It returns N, whose close-on-exec flag the step
// clears last.
func moveReadyFD(spec string, report **os.File) (int, error) {
	a, b, _ := strings.Cut(spec, ":")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	cgfd := -1 // the node's cgroup folder, which the step joins later
	if v := os.Getenv(CgroupEnv); v != "" {
		cgfd, _ = strconv.Atoi(v)
	}
	if err1 != nil || err2 != nil || from < 3 || to < 3 || from != to && to != ErrFD && to != DirFD && to != cgfd {
		return -1, fmt.Errorf("exec step: bad %s %q", ReadyEnv, spec)
	}
	if from == to {
		return to, nil
	}
	if to == cgfd {
		// Kept, elsewhere, for the join.
		nfd, err := unix.FcntlInt(uintptr(cgfd), unix.F_DUPFD_CLOEXEC, 10)
		if err != nil {
			return -1, fmt.Errorf("--ready=fd:%d: %w", to, err)
		}
		os.Setenv(CgroupEnv, strconv.Itoa(nfd))
	} else if to == ErrFD {
		nfd, err := unix.FcntlInt((*report).Fd(), unix.F_DUPFD_CLOEXEC, 10)
		if err != nil {
			return -1, fmt.Errorf("--ready=fd:%d: %w", to, err)
		}
		// Replaced below, atomically, by dup3; the old File is kept
		// reachable, so that no finalizer ever closes what is then fd 3.
		movedReport, *report = *report, os.NewFile(uintptr(nfd), "multi-report")
	} else if _, err := unix.FcntlInt(uintptr(to), unix.F_GETFD, 0); err == nil {
		return -1, fmt.Errorf("--ready=fd:%d: the exec step holds descriptor %d", to, to)
	}
	if err := dup2(from, to); err != nil {
		return -1, fmt.Errorf("--ready=fd:%d: %w", to, err)
	}
	unix.Close(from)
	return to, nil
}

// ExecFailKind is how the exec step reports a command it cannot run:
// "noent" (exit code 127 under run), "noexec" (126), or "fail".
func ExecFailKind(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "noent"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		// A folder is there, but is no program (a shell's 126 too).
		return "noexec"
	}
	return "fail"
}
