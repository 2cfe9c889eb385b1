//go:build linux && amd64

package launch

// The node's process between fork and exec, without the exec step: a
// vfork'd child, one thread running in this process's memory on the
// forking goroutine's stack while that thread waits, which makes only raw
// system calls with what the parent prepared (a forkPlan), never the Go
// runtime: no allocation, no stack growth (every function here is
// nosplit, which the linker checks), no race or pointer instrumentation.
// It has a descriptor table and signal actions of its own. All signals
// are blocked from before the fork until just before the exec.

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The child's reports on its report pipe: fallback (nothing changed: the
// parent starts the node through the exec step instead, which says why,
// or waits) or a failure after the lock was taken (the pidfile removed
// again), with its stage and errno. A child that execs writes nothing.
const (
	reportFallback = 'R'
	reportFailed   = 'F'
)

// The stages a failure after the lock is reported from.
const (
	stageTruncate = 1 + iota
	stageWrite
	stageCgroup
	stageLimit // the report's third byte says which of the plan's limits
	stageExec
)

// The descriptors the child gets from the parent, in forkPlan.src, and
// where each goes: the first five to fixed numbers (the ready pipe's only
// with an fd:N check), the rest are the child's own until its exec.
const (
	fdStdin = iota
	fdStdout
	fdStderr
	fdLock  // to forkPlan.lockTo
	fdReady // to forkPlan.readyTo
	fdReport
	fdLockDir
	fdCgroup
	fdCount
)

// A forkPlan is everything the child needs, made by the parent before
// the fork. The child writes into it (the parent's memory: src, keep and
// the buffers), which the parent does not read again.
type forkPlan struct {
	path unsafe.Pointer // *byte: the program, NUL-terminated
	argv unsafe.Pointer // **byte, nil-terminated
	envv unsafe.Pointer // **byte, nil-terminated

	wd      int            // the working folder to fchdir to, or -1
	src     [fdCount]int   // descriptors in the parent (and so in the child), -1 for none
	lockTo  int            // where the lock's descriptor goes (>= 3)
	readyTo int            // where the ready pipe goes, or -1
	above   int            // every descriptor is first moved to at least this
	name    unsafe.Pointer // *byte: the pidfile's name in its folder
	procs   unsafe.Pointer // *byte: "cgroup.procs"

	nofile    unix.Rlimit // the caller's RLIMIT_NOFILE, set if setNofile
	setNofile bool
	// limits are the node's own rlimits, the first nlimits of them, set
	// after nofile (one of them may be RLIMIT_NOFILE: then setNofile is
	// false).
	limits  [maxLimits]childLimit
	nlimits int

	keep   [fdCount]int // the child's: sorted, the descriptors kept open
	flock  unix.Flock_t
	st     [2]unix.Statx_t
	pid    [24]byte
	report [8]byte
	dfl    [4]uint64 // a kernel sigaction: SIG_DFL, no flags, empty mask
	empty  uint64    // an empty signal mask
}

// maxLimits is how many rlimits a node may have: nofile, nproc, core, as.
const maxLimits = 4

// A childLimit is one rlimit the child sets: prlimit64's resource and
// value.
type childLimit struct {
	resource uintptr
	lim      unix.Rlimit
}

// forkChild forks the child, which runs the plan and never returns; the
// parent gets its pid once the child has exec'd or exited. The child
// shares this process's memory until then (vfork: no copy of the page
// tables, which costs a process of this size more than the rest of a
// start), so it writes only into the plan and its own stack frames,
// below this one. The calling thread's signals must be blocked.
//
//go:norace
//go:nocheckptr
//go:nosplit
func forkChild(p *forkPlan) (int, syscall.Errno) {
	pid, e := rawVfork(uintptr(syscall.SIGCHLD) | unix.CLONE_VM | unix.CLONE_VFORK)
	if e != 0 || pid != 0 {
		return int(pid), syscall.Errno(e)
	}
	childRun(p)
	return 0, 0
}

// rawVfork is clone(2) with flags, on this goroutine's stack (see
// vfork_linux_amd64.s).
func rawVfork(flags uintptr) (pid, errno uintptr)

// childRun is the child: its session, working folder and descriptors
// set up, its signals at their defaults, the pidfile locked once every
// other descriptor of it is closed, its pid written, its cgroup joined;
// then the exec.
//
//go:norace
//go:nocheckptr
//go:nosplit
func childRun(p *forkPlan) {
	if _, _, e := syscall.RawSyscall(unix.SYS_SETSID, 0, 0, 0); e != 0 {
		childExit(p, reportFallback, 0, e)
	}
	if p.wd >= 0 {
		if _, _, e := syscall.RawSyscall(unix.SYS_FCHDIR, uintptr(p.wd), 0, 0); e != 0 {
			childExit(p, reportFallback, 0, e)
		}
	}
	// Every descriptor kept, moved above the numbers it or another goes to.
	for i := range p.src {
		if p.src[i] < 0 {
			continue
		}
		r, _, e := syscall.RawSyscall(unix.SYS_FCNTL, uintptr(p.src[i]), unix.F_DUPFD_CLOEXEC, uintptr(p.above))
		if e != 0 {
			childExit(p, reportFallback, 0, e)
		}
		p.src[i] = int(r)
	}
	if !childDup(p, fdStdin, 0) || !childDup(p, fdStdout, 1) || !childDup(p, fdStderr, 2) ||
		!childDup(p, fdLock, p.lockTo) || !childDup(p, fdReady, p.readyTo) {
		childExit(p, reportFallback, 0, 0)
	}
	// Every other descriptor closed now, the caller's and every copy of
	// the pidfile among them: one closed after the lock, even by the
	// exec's close-on-exec, would drop it.
	n := 0
	p.keep[n], n = p.lockTo, n+1
	if p.readyTo >= 0 {
		p.keep[n], n = p.readyTo, n+1
	}
	for _, i := range [...]int{fdReport, fdLockDir, fdCgroup} {
		if p.src[i] >= 0 {
			p.keep[n], n = p.src[i], n+1
		}
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && p.keep[j] < p.keep[j-1]; j-- {
			p.keep[j], p.keep[j-1] = p.keep[j-1], p.keep[j]
		}
	}
	from := 3
	for i := 0; i < n; i++ {
		if p.keep[i] > from {
			if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(from), uintptr(p.keep[i]-1), 0); e != 0 {
				childExit(p, reportFallback, 0, e)
			}
		}
		from = p.keep[i] + 1
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(from), uintptr(^uint32(0)), 0); e != 0 {
		childExit(p, reportFallback, 0, e)
	}
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig != uintptr(syscall.SIGKILL) && sig != uintptr(syscall.SIGSTOP) {
			syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&p.dfl)), 0, 8, 0, 0)
		}
	}
	// The lock, and the file it is on still the one at the path: else the
	// exec step starts the node, retrying as Acquire does.
	if _, _, e := syscall.RawSyscall(unix.SYS_FCNTL, uintptr(p.lockTo), unix.F_SETLK, uintptr(unsafe.Pointer(&p.flock))); e != 0 {
		childExit(p, reportFallback, 0, e)
	}
	if !childSameFile(p) {
		childExit(p, reportFallback, 0, 0)
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_FTRUNCATE, uintptr(p.lockTo), 0, 0); e != 0 {
		childFail(p, stageTruncate, e)
	}
	pid, _, _ := syscall.RawSyscall(unix.SYS_GETPID, 0, 0, 0)
	i := len(p.pid) - 1
	p.pid[i] = '\n'
	for i--; ; i-- {
		p.pid[i] = byte('0' + pid%10)
		if pid /= 10; pid == 0 {
			break
		}
	}
	digits := uintptr(len(p.pid) - 1 - i)
	if r, _, e := syscall.RawSyscall6(unix.SYS_PWRITE64, uintptr(p.lockTo), uintptr(unsafe.Pointer(&p.pid[i])), digits+1, 0, 0, 0); e != 0 || r != digits+1 {
		childFail(p, stageWrite, e)
	}
	// The node's cgroup, joined before its command runs: nothing it forks
	// is outside it.
	if cg := p.src[fdCgroup]; cg >= 0 {
		fd, _, e := syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(cg), uintptr(p.procs), unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0, 0, 0)
		if e != 0 {
			childFail(p, stageCgroup, e)
		}
		if _, _, e := syscall.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p.pid[i])), digits); e != 0 {
			childFail(p, stageCgroup, e)
		}
		syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	}
	if p.setNofile {
		syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&p.nofile)), 0, 0, 0)
	}
	// The node's own limits, last: a limit that cannot be set fails the
	// start, naming it.
	for i := 0; i < p.nlimits && i < len(p.limits); i++ {
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, p.limits[i].resource, uintptr(unsafe.Pointer(&p.limits[i].lim)), 0, 0, 0); e != 0 {
			p.report[2] = byte(i)
			childFail(p, stageLimit, e)
		}
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.empty)), 0, 8, 0, 0)
	_, _, e := syscall.RawSyscall(unix.SYS_EXECVE, uintptr(p.path), uintptr(p.argv), uintptr(p.envv))
	childFail(p, stageExec, e)
}

// childDup puts the descriptor p.src[i], if any, at to, open across the
// exec.
//
//go:norace
//go:nocheckptr
//go:nosplit
func childDup(p *forkPlan, i, to int) bool {
	if p.src[i] < 0 || to < 0 {
		return true
	}
	_, _, e := syscall.RawSyscall(unix.SYS_DUP3, uintptr(p.src[i]), uintptr(to), 0)
	return e == 0
}

// childSameFile reports whether the pidfile's name in its folder is the
// file locked (not followed, if a link).
//
//go:norace
//go:nocheckptr
//go:nosplit
func childSameFile(p *forkPlan) bool {
	_, _, e := syscall.RawSyscall6(unix.SYS_STATX, uintptr(p.lockTo), uintptr(unsafe.Pointer(&emptyPath[0])),
		unix.AT_EMPTY_PATH, unix.STATX_INO, uintptr(unsafe.Pointer(&p.st[0])), 0)
	if e != 0 {
		return false
	}
	_, _, e = syscall.RawSyscall6(unix.SYS_STATX, uintptr(p.src[fdLockDir]), uintptr(p.name),
		unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO, uintptr(unsafe.Pointer(&p.st[1])), 0)
	return e == 0 && p.st[0].Ino == p.st[1].Ino && p.st[0].Dev_major == p.st[1].Dev_major && p.st[0].Dev_minor == p.st[1].Dev_minor
}

// emptyPath is "" for statx(2) with AT_EMPTY_PATH.
var emptyPath = [1]byte{0}

// childFail removes the pidfile, whose lock the child holds, if it is
// still the file at the path (as Lock.Release does), and reports the
// failure.
//
//go:norace
//go:nocheckptr
//go:nosplit
func childFail(p *forkPlan, stage byte, e syscall.Errno) {
	if childSameFile(p) {
		syscall.RawSyscall(unix.SYS_UNLINKAT, uintptr(p.src[fdLockDir]), uintptr(p.name), 0)
	}
	childExit(p, reportFailed, stage, e)
}

// childExit writes the report (its third byte as the caller left it) and
// exits.
//
//go:norace
//go:nocheckptr
//go:nosplit
func childExit(p *forkPlan, kind, stage byte, e syscall.Errno) {
	p.report[0], p.report[1] = kind, stage
	p.report[4], p.report[5], p.report[6], p.report[7] = byte(e), byte(e>>8), byte(e>>16), byte(e>>24)
	if fd := p.src[fdReport]; fd >= 0 {
		syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p.report[0])), uintptr(len(p.report)))
	}
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	}
}
