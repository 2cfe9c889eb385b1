//go:build linux && amd64

package multi

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe" // and for go:linkname

	"golang.org/x/sys/unix"
)

// The fork path: the launcher forks, and the child, with nothing but
// system calls, takes the pidfile's lock, writes its pid and execs the
// node's command. It does what the exec step does, without starting a Go
// runtime in every node: the step's re-exec of this program is most of
// the CPU of a start through it (docs/benchmarks.md).
//
// The fork is a vfork (CLONE_VM|CLONE_VFORK), as os/exec's: the child
// borrows the parent's memory and stack until its exec, and the parent's
// thread waits meanwhile, so no page table is copied and no page of the
// launcher's is copied on write (a plain fork made copying and tearing
// down the launcher's address space half of start's CPU). forkNode must
// call rawVfork itself, not through a function that would return twice
// on the shared stack; the child never returns from forkNode. Between
// fork and exec the child must not allocate, take a lock, or grow its
// stack, and what it writes lands in the parent's memory: only forkSpec's
// scratch fields.
// The runtime's fork hooks, which package syscall uses for the same
// purpose, block signals around the fork and make any stack growth in the
// child fatal rather than silent.

// rawVfork is clone(2) with flags, on this stack (vfork_linux_amd64.s).
func rawVfork(flags uintptr) (pid, errno uintptr)

//go:linkname runtime_BeforeFork syscall.runtime_BeforeFork
func runtime_BeforeFork()

//go:linkname runtime_AfterFork syscall.runtime_AfterFork
func runtime_AfterFork()

//go:linkname runtime_AfterForkInChild syscall.runtime_AfterForkInChild
func runtime_AfterForkInChild()

// forkSpec is everything the child needs, prepared by the parent: byte
// strings ending in NUL, descriptors, and scratch space the child writes
// to (in the parent's memory: a spec serves one fork at a time).
type forkSpec struct {
	path     *byte   // the command's program, as execve(2) takes it
	argv     []*byte // ending in nil
	envv     []*byte // ending in nil
	dirFD    int     // the working folder, opened by the no-link walk; -1: stay in this folder
	pidfile  *byte   // the pidfile's absolute path, for the same-file check
	waitFifo *byte   // the tests' FIFO (package testhooks), or nil: decided by the parent
	empty    [1]byte // "", for statx(2) on a descriptor

	pidFD, logFD, nullFD, reportFD int
	fdcwd                          int // AT_FDCWD: the path is absolute anyway
	maxFD                          int // the highest descriptor there can be

	lk       syscall.Flock_t
	st1, st2 unix.Statx_t
	pidText  [24]byte
	report   [2]uint32
	sigZero  [4]uint64 // a kernel sigaction of SIG_DFL, and an empty mask

	nofile    unix.Rlimit // the limit on descriptors multi was started with (see origNofile)
	nofileNow unix.Rlimit
	setNofile bool // nofile is lower than this process's: set it
}

// forkNode forks; the child runs spec and never returns. In the parent it
// returns the child's pid.
//
//go:noinline
//go:norace
//go:nocheckptr
func forkNode(s *forkSpec) (int, syscall.Errno) {
	runtime_BeforeFork()
	r1, e1 := rawVfork(syscall.CLONE_VM | syscall.CLONE_VFORK | uintptr(syscall.SIGCHLD))
	if e1 != 0 || r1 != 0 {
		runtime_AfterFork()
		return int(r1), syscall.Errno(e1)
	}

	// In the child. Signal handlers back to their defaults, and the mask
	// this thread had before the fork.
	runtime_AfterForkInChild()

	// Standard input, output and error first: the child must never hold
	// the launcher's own, or a caller reading multi's output would wait
	// for a child that waits (the tests' hook below, or a slow exec).
	// The parent's descriptors are all 3 or above (spawnFork checks), so
	// none is overwritten.
	for _, d := range [3][2]int{{s.nullFD, 0}, {s.logFD, 1}, {s.logFD, 2}} {
		if _, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(d[0]), uintptr(d[1]), 0); e != 0 {
			forkFail(s, forkDup, e)
		}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0); e != 0 {
		forkFail(s, forkSetsid, e)
	}
	if s.dirFD >= 0 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_FCHDIR, uintptr(s.dirFD), 0, 0); e != 0 {
			forkFail(s, forkChdir, e)
		}
	}
	// Every other descriptor closed before the lock is taken: the
	// launcher's, close-on-exec, would close at the exec anyway, and
	// closing one that names the same pidfile (another start or a look at
	// it in this process, at the moment of the fork) after the lock would
	// drop the lock (see package nodes/pidfile's doc). What the launcher
	// itself inherited goes too, as with a daemon: a node keeps no pipe
	// of its caller's open.
	closeFrom(s, 3, min(s.pidFD, s.reportFD)-1)
	closeFrom(s, min(s.pidFD, s.reportFD)+1, max(s.pidFD, s.reportFD)-1)
	closeFrom(s, max(s.pidFD, s.reportFD)+1, -1)
	// The lock, on the descriptor the parent opened: this process's from
	// now until it exits, across the exec.
	_, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(s.pidFD), syscall.F_SETLK, uintptr(unsafe.Pointer(&s.lk)))
	if e == syscall.EAGAIN || e == syscall.EACCES {
		forkFail(s, forkBusy, e)
	} else if e != 0 {
		forkFail(s, forkLock, e)
	}
	// Still the file at the path: not removed or replaced (by a multi that
	// found it stale) between the parent's open and this lock.
	_, _, e = syscall.RawSyscall6(unix.SYS_STATX, uintptr(s.pidFD), uintptr(unsafe.Pointer(&s.empty[0])), unix.AT_EMPTY_PATH, unix.STATX_INO, uintptr(unsafe.Pointer(&s.st1)), 0)
	if e != 0 {
		forkFail(s, forkMoved, e)
	}
	_, _, e = syscall.RawSyscall6(unix.SYS_STATX, uintptr(s.fdcwd), uintptr(unsafe.Pointer(s.pidfile)), unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO, uintptr(unsafe.Pointer(&s.st2)), 0)
	if e != 0 || s.st1.Ino != s.st2.Ino || s.st1.Dev_major != s.st2.Dev_major || s.st1.Dev_minor != s.st2.Dev_minor {
		forkFail(s, forkMoved, e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_FTRUNCATE, uintptr(s.pidFD), 0, 0); e != 0 {
		forkFail(s, forkWrite, e)
	}
	pid, _, _ := syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
	i := len(s.pidText) - 1
	s.pidText[i] = '\n'
	for {
		i--
		s.pidText[i] = byte('0' + pid%10)
		pid /= 10
		if pid == 0 || i == 0 {
			break
		}
	}
	n := uintptr(len(s.pidText) - i)
	if w, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, uintptr(s.pidFD), uintptr(unsafe.Pointer(&s.pidText[i])), n, 0, 0, 0); e != 0 || w != n {
		forkFail(s, forkWrite, e)
	}
	// The locked descriptor must survive the exec: clearing close-on-exec
	// on it, never closing it (see package nodes/pidfile's doc).
	if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(s.pidFD), syscall.F_SETFD, 0); e != 0 {
		forkFail(s, forkKeep, e)
	}
	if s.waitFifo != nil {
		// The tests' hook (testhooks.Fork): wait, locked, for a reader of
		// the FIFO, where they kill multi start.
		fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(s.fdcwd), uintptr(unsafe.Pointer(s.waitFifo)), syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0)
		if e == 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		}
	}
	// The soft limit on descriptors multi's caller gave it, as os/exec's
	// children get it back, unless something set multi's since.
	if s.setNofile {
		_, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&s.nofileNow)), 0, 0)
		if e == 0 && s.nofileNow.Cur == s.nofile.Max-1 && s.nofileNow.Max == s.nofile.Max {
			syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&s.nofile)), 0, 0, 0)
		}
	}
	// The node starts with no signal blocked and none ignored, whatever
	// the caller of multi blocked or ignored (the exec itself resets the
	// handled ones): as a service manager starts a service.
	for sig := uintptr(1); sig <= 64; sig++ {
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&s.sigZero[0])), 0, 8, 0, 0)
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&s.sigZero[0])), 0, 8, 0, 0)
	_, _, e = syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(s.path)), uintptr(unsafe.Pointer(&s.argv[0])), uintptr(unsafe.Pointer(&s.envv[0])))
	forkFail(s, forkExec, e)
	return 0, 0 // not reached
}

// closeFrom closes, in the child, the descriptors from first to last (to
// the end with last -1), with close_range(2), or one by one up to the
// parent's limit where the kernel has none (before Linux 5.9).
//
//go:nosplit
//go:norace
//go:nocheckptr
func closeFrom(s *forkSpec, first, last int) {
	if last != -1 && last < first {
		return
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(first), uintptr(last), 0); e != syscall.ENOSYS {
		return
	}
	if last == -1 {
		last = s.maxFD
	}
	for fd := first; fd <= last; fd++ {
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	}
}

// forkFail reports, in the child, the stage that failed and its errno on
// the report pipe, and exits. The exit drops the lock if it was taken.
//
//go:nosplit
//go:norace
//go:nocheckptr
func forkFail(s *forkSpec, stage uint32, e syscall.Errno) {
	s.report[0], s.report[1] = stage, uint32(e)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(s.reportFD), uintptr(unsafe.Pointer(&s.report[0])), unsafe.Sizeof(s.report))
	for {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
	}
}

// nofileLimit is the limit on descriptors a node is to start with.
type nofileLimit struct {
	lim     unix.Rlimit // the one multi was started with
	restore bool        // lim is lower than this process's
	ok      bool        // known; if not, the exec step starts the node
}

// origNofile is the limit on descriptors multi was started with. The Go
// runtime raises its own soft limit at start, to the hard limit less one
// (its mark), and gives the original back to the children that os/exec
// starts (the exec step's node among them), but keeps it to itself. Such
// a child, traced so that it stops at its exec before it runs an
// instruction, shows it: probed once per process, and only when the
// runtime's mark says it raised the limit. A soft limit of 1024 under a
// higher hard one is what a program that uses select(2) needs.
var origNofile = sync.OnceValue(probeNofile)

func probeNofile() nofileLimit {
	var cur unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &cur) != nil {
		return nofileLimit{}
	}
	if cur.Max == 0 || cur.Cur != cur.Max-1 {
		return nofileLimit{lim: cur, ok: true} // not raised by the runtime
	}
	runtime.LockOSThread() // the tracer is this thread
	defer runtime.UnlockOSThread()
	p, err := os.StartProcess(procSelfExe, []string{"multi: rlimit probe"}, &os.ProcAttr{
		Env: []string{},
		Sys: &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return nofileLimit{} // ptrace refused (seccomp, Yama): the exec step
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.Pid))
	p.Kill()
	p.Wait()
	if err != nil {
		return nofileLimit{}
	}
	for _, l := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(l, "Max open files")
		if f := strings.Fields(v); ok && len(f) >= 2 {
			soft, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil || soft > cur.Max {
				return nofileLimit{}
			}
			return nofileLimit{lim: unix.Rlimit{Cur: soft, Max: cur.Max}, restore: soft < cur.Cur, ok: true}
		}
	}
	return nofileLimit{}
}
