//go:build linux && amd64

package launch

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/internal/step"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// beforeDirectFork, when set (by a test), runs just before the fork, its
// pidfile open.
var beforeDirectFork func(n nodes.Node)

// spawnDirect starts n without the exec step: this process forks the
// node's process, which locks the pidfile, writes its pid, joins its
// cgroup and execs the command, with raw system calls only (see
// forkChild), so that no Go runtime starts in it. Everything that can
// fail with a message of its own is done here first, as the exec step
// would; anything it cannot do as the step does (a relative or missing
// program, a lock not free at once, a Run's pipes, a self-locking node,
// a log writer, the test hooks) gives errUseStep, with nothing changed,
// for the step to do it.
func spawnDirect(ctx context.Context, rp *Reaper, n nodes.Node, env []string) (*Child, error) {
	if _, _, logged := n.Limits.LogRotation(); logged || !directSpawn || rp != nil || n.SelfLock || len(n.Command) == 0 || (testhooks.StepDriven != nil && testhooks.StepDriven(env)) {
		return nil, errUseStep
	}
	path, ok := resolveCommand(n.Command[0], env)
	if !ok {
		return nil, errUseStep
	}
	lims := rlimitsOf(n)
	ownNofile := false
	for _, l := range lims {
		ownNofile = ownNofile || l.Name == "nofile"
	}
	nofile, setNofile, ok := nofileFor()
	if ownNofile {
		// The node's own replaces the caller's, which need not be known.
		setNofile, ok = false, true
	}
	if !ok || len(lims) > maxLimits {
		return nil, errUseStep
	}
	ch := &Child{node: n, born: time.Now(), bornTicks: proc.NowTicks()}
	p := &forkPlan{wd: -1, readyTo: -1, nofile: nofile, setNofile: setNofile}
	for _, l := range lims {
		res, ok := step.RlimitResource(l.Name)
		if !ok {
			return nil, errUseStep // the step says why
		}
		p.limits[p.nlimits] = childLimit{resource: uintptr(res), lim: unix.Rlimit{Cur: l.Soft, Max: l.Hard}}
		p.nlimits++
	}
	for i := range p.src {
		p.src[i] = -1
	}
	// Everything opened here is closed once the child has exec'd or
	// failed: the child has its own copies.
	var wd, cg, log, w, rw *os.File
	var lock *pidfile.ForChild
	defer func() {
		for _, f := range []*os.File{wd, cg, log, w, rw} {
			if f != nil {
				f.Close()
			}
		}
		if lock != nil {
			lock.Close()
		}
		if ch.readyR != nil && ch.cmd == nil {
			ch.readyR.Close()
		}
	}()
	var err error
	if n.Dir != "" {
		if wd, err = OpenWorkDir(n); err != nil {
			return nil, errUseStep
		}
		p.wd = int(wd.Fd())
	}
	if n.Cgroup != "" {
		if cg, err = cgroup.Open(n.Cgroup); err != nil {
			return nil, errUseStep
		}
		p.src[fdCgroup] = int(cg.Fd())
	}
	if lock, err = pidfile.OpenForChild(n.PidFile); err != nil {
		return nil, errUseStep
	}
	p.src[fdLock], p.src[fdLockDir] = lock.FD(), lock.DirFD()
	if log, err = safefs.OpenLogfile(n.LogFile); err != nil {
		return nil, errUseStep
	}
	if st, err := log.Stat(); err == nil {
		ch.logOff = st.Size() // the log is appended to: show only this run's lines
	}
	null, err := devNull()
	if err != nil {
		return nil, errUseStep
	}
	p.src[fdStdin], p.src[fdStdout], p.src[fdStderr] = int(null.Fd()), int(log.Fd()), int(log.Fd())
	r, w, err := os.Pipe()
	if err != nil {
		return nil, errUseStep
	}
	defer r.Close()
	p.src[fdReport] = int(w.Fd())
	if to := readyFDOf(n); to > 0 {
		if ch.readyR, rw, err = os.Pipe(); err != nil {
			return nil, errUseStep
		}
		p.src[fdReady], p.readyTo = int(rw.Fd()), to
	}
	p.lockTo = 3
	if p.readyTo == 3 {
		p.lockTo = 4
	}
	p.above = max(p.lockTo, p.readyTo) + 1
	argv := n.Command
	if err := p.setStrings(path, argv, directEnviron(env, n, p.lockTo), lock.Name()); err != nil {
		return nil, errUseStep // a NUL in an argument: the step says so
	}
	if beforeDirectFork != nil {
		beforeDirectFork(n)
	}
	pid, errno := forkPlanned(p)
	runtime.KeepAlive(p)
	if errno != 0 {
		return nil, errUseStep // EAGAIN and the like: the step's fork says why
	}
	// The child's are then the only writers.
	w.Close()
	if rw != nil {
		rw.Close()
	}
	w, rw = nil, nil
	msg, _ := io.ReadAll(r)
	// The lock taken, as the open pidfile shows: the child locked it once
	// its folder named it, so the node runs holding its lock.
	holder, _ := lock.Holder()
	lock.Close() // before any look at the pidfile here: Inspect waits for it
	lock = nil
	proc, err := os.FindProcess(pid)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Process: proc}
	ch.pid = pid
	if len(msg) > 0 {
		ch.rp.waitChild(cmd)
		if len(msg) < 8 || msg[0] == reportFallback {
			return nil, errUseStep
		}
		directTaken.Add(1)
		e := syscall.Errno(binary.LittleEndian.Uint32(msg[4:8]))
		if msg[1] == stageLimit && int(msg[2]) < len(lims) {
			l := lims[msg[2]]
			res, _ := step.RlimitResource(l.Name)
			var cur unix.Rlimit
			unix.Getrlimit(res, &cur) // the child's, before its own: this process's
			return nil, step.LimitError(l.Name, l.Soft, l.Hard, cur.Max, e)
		}
		return nil, directFailure(n, argv[0], msg[1], e)
	}
	ch.cmd = cmd
	directTaken.Add(1)
	if holder == pid {
		return ch, nil
	}
	if _, err := ch.confirm(); err != nil {
		ch.readyR.Close()
		return nil, err
	}
	return ch, nil
}

// directFailure is the error a child reported after it took the lock,
// as the exec step words it.
func directFailure(n nodes.Node, name string, stage byte, e syscall.Errno) error {
	switch stage {
	case stageTruncate:
		return fmt.Errorf("pidfile %s: cannot truncate it: %w", n.PidFile, e)
	case stageWrite:
		return fmt.Errorf("pidfile %s: cannot write the pid: %w", n.PidFile, e)
	case stageCgroup:
		return fmt.Errorf("cgroup: %w", e)
	}
	err := &exec.Error{Name: name, Err: e}
	switch step.ExecFailKind(e) {
	case "noent":
		return &stepError{msg: err.Error(), is: ErrCommandNotFound}
	case "noexec":
		return &stepError{msg: err.Error(), is: ErrCommandNotExecutable}
	}
	return err
}

// resolveCommand finds the program name runs as the exec step's
// exec.LookPath would, where that does not depend on the working
// folder: an absolute path, or a name found in a $PATH of absolute
// folders only. ok is false otherwise, and for a program not found (the
// step says why).
func resolveCommand(name string, env []string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, filepath.IsAbs(name) && executable(name)
	}
	lookup, ok := LookPATH(env)
	if !ok {
		return "", false
	}
	for _, dir := range filepath.SplitList(lookup) {
		if !filepath.IsAbs(dir) {
			return "", false // "" or ".": relative to the working folder
		}
		if path := filepath.Join(dir, name); executable(path) {
			return path, true
		}
	}
	return "", false
}

// executable reports whether path is a file this process may execute,
// as exec.LookPath tests it.
func executable(path string) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return false
	}
	return unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS) == nil
}

// directEnviron is the node's environment as the exec step leaves it:
// env (the last of each name counts) with its node's name, its pidfile's
// path and the descriptor of its lock, and none of the step's own.
func directEnviron(env []string, n nodes.Node, lockFD int) []string {
	all := append(env[:len(env):len(env)], nodes.EnvNode+"="+n.FullName())
	last := make(map[string]int, len(all))
	for i, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(all)+2)
	for i, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		if last[k] != i || stepOwn(k) || k == pidfile.EnvPidfile || k == pidfile.EnvPidfileFD {
			continue
		}
		out = append(out, kv)
	}
	return append(out, pidfile.EnvPidfile+"="+n.PidFile, pidfile.EnvPidfileFD+"="+strconv.Itoa(lockFD))
}

// stepOwn reports whether k is a variable of the exec step's, which a
// node never sees.
func stepOwn(k string) bool {
	switch k {
	case stepEnv, stepDirEnv, stepCgroupEnv, stepPathEnv, stepProcsEnv, stepReadyEnv, stepLimitsEnv, StepOutEnv, StepStandbyEnv, safefs.SharedEnv:
		return true
	}
	return false
}

// setStrings gives the plan its program, arguments, environment and the
// pidfile's name as C strings.
func (p *forkPlan) setStrings(path string, argv, envv []string, name string) error {
	cpath, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	cargv, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	cenvv, err := syscall.SlicePtrFromStrings(envv)
	if err != nil {
		return err
	}
	cname, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	p.path, p.argv, p.envv = unsafe.Pointer(cpath), unsafe.Pointer(&cargv[0]), unsafe.Pointer(&cenvv[0])
	p.name, p.procs = unsafe.Pointer(cname), unsafe.Pointer(&cgroupProcs[0])
	p.flock = unix.Flock_t{Type: unix.F_WRLCK}
	return nil
}

// cgroupProcs is the file a process joins a cgroup through.
var cgroupProcs = [...]byte{'c', 'g', 'r', 'o', 'u', 'p', '.', 'p', 'r', 'o', 'c', 's', 0}

// forkPlanned forks the child of plan p with every signal blocked on
// this thread, so that no handler of this process runs in the child
// before it has set them to their defaults.
func forkPlanned(p *forkPlan) (int, syscall.Errno) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	all, old := ^uint64(0), uint64(0)
	if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return 0, e
	}
	pid, e := forkChild(p)
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	return pid, e
}
