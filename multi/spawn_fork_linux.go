//go:build linux && amd64

package multi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

// The stages at which the forked child can fail, as it reports them.
const (
	forkDup = iota + 1
	forkSetsid
	forkChdir
	forkBusy  // the lock is held
	forkLock  // F_SETLK failed otherwise
	forkMoved // the pidfile was removed or replaced under the lock
	forkWrite // the pid could not be written
	forkKeep  // close-on-exec could not be cleared
	forkExec
)

// spawnFork starts n as [spawn] does, through [forkNode] rather than the
// exec step. ok is false when it does not apply, and the caller then uses
// the exec step: under [Cluster.Run] (the step waits for a held lock and
// hands output to Run), for a self-locking node, for the tests' hooks
// inside the step, and whenever something fails before the fork (the
// command is not found, the logfile cannot be opened, ...), so that such
// failures are reported exactly as the step reports them, in its order.
func spawnFork(n nodes.Node, env []string) (ch *child, err error, ok bool) {
	if active.Load() != nil || n.SelfLock || !filepath.IsAbs(n.PidFile) || !filepath.IsAbs(n.LogFile) {
		return nil, nil, false
	}
	// The tests' hooks (nil in production: package testhooks) decide the
	// child's FIFO here, in the parent; the child only opens a path given.
	fifo := ""
	if h := testhooks.Fork; h != nil {
		var step bool
		if env, fifo, step = h(env); step {
			return nil, nil, false
		}
	}
	path, ok := lookNode(n, env)
	if !ok {
		return nil, nil, false
	}
	nofile := origNofile()
	if !nofile.ok {
		return nil, nil, false
	}
	null, err := devNull()
	if err != nil {
		return nil, nil, false
	}
	// Counted before anything is made: a node refused leaves no logfile.
	done, err := tasks.take(1)
	if err != nil {
		return nil, err, true
	}
	defer func() { done(ch != nil) }()
	log, err := nodes.OpenLogfile(n.LogFile)
	if err != nil {
		return nil, nil, false
	}
	defer log.Close()
	if null.Fd() < 3 || log.Fd() < 3 {
		// A program that closed its standard input, output or error:
		// the child's dup3 onto 0, 1 and 2 would overwrite its own
		// descriptors. os/exec's child sorts them out.
		return nil, nil, false
	}
	ch = &child{node: n, born: time.Now(), logOff: -1}
	if st, err := log.Stat(); err == nil {
		ch.logOff = st.Size() // the log is appended to: show only this run's lines
	}

	s := &forkSpec{nullFD: int(null.Fd()), logFD: int(log.Fd()), dirFD: -1, fdcwd: unix.AT_FDCWD, maxFD: maxFD()}
	s.lk.Type = syscall.F_WRLCK // whole file: Whence, Start and Len 0
	s.nofile, s.setNofile = nofile.lim, nofile.restore
	if s.path, err = syscall.BytePtrFromString(path); err != nil {
		return nil, nil, false
	}
	if s.pidfile, err = syscall.BytePtrFromString(n.PidFile); err != nil {
		return nil, nil, false
	}
	if n.Dir != "" {
		// The child changes to the folder the walk reached, not to a
		// path that could be swapped for a link meanwhile.
		wd, err := nodes.OpenWorkDir(n)
		if err != nil || wd.Fd() < 3 {
			if err == nil {
				wd.Close()
			}
			return nil, nil, false // the exec step says why
		}
		defer wd.Close()
		s.dirFD = int(wd.Fd())
	}
	if fifo != "" {
		if s.waitFifo, err = syscall.BytePtrFromString(fifo); err != nil {
			return nil, nil, false
		}
	}
	if s.argv, err = syscall.SlicePtrFromStrings(n.Command); err != nil {
		return nil, nil, false
	}
	s.argv = append(s.argv, nil)

	t0 := time.Now()
	for try := 0; ; try++ {
		claim, err := pidfile.OpenClaim(n.PidFile)
		if err != nil {
			return nil, err, true
		}
		s.pidFD = int(claim.File().Fd())
		if s.pidFD < 3 {
			claim.Close()
			return nil, nil, false // as above
		}
		if s.envv, err = syscall.SlicePtrFromStrings(forkEnviron(env, n, s.pidFD)); err != nil {
			claim.Close()
			return nil, nil, false
		}
		s.envv = append(s.envv, nil)
		stage, errno, pid, err := forkReport(s)
		if stage != forkBusy {
			claim.Close()
		}
		if errors.Is(err, errLowFD) {
			return nil, nil, false // as above
		}
		if err != nil {
			// No child (no process or descriptor left): a pidfile this
			// made is left empty and unlocked; one there before, stale.
			pidfile.RemoveStale(n.PidFile)
			return nil, forkErr(err), true
		}
		ch.pid = pid
		ch.cmd = &exec.Cmd{Path: path, Args: n.Command, Process: mustFind(pid)}
		if stage == 0 {
			// The report pipe closed with nothing said: the exec happened,
			// or the child died without a word. The lock tells which.
			if _, err := ch.confirm(); err != nil {
				return nil, err, true
			}
			return ch, nil, true
		}
		ch.cmd.Process.Wait() // it exited, dropping the lock if it had it
		switch stage {
		case forkBusy:
			err := claim.Busy(try, t0)
			claim.Close()
			var fe *pidfile.ForeignError
			if errors.As(err, &fe) {
				return nil, &stepError{msg: fe.Error(), is: ErrForeignLock}, true
			}
			if err != nil {
				return nil, err, true
			}
			continue
		case forkMoved:
			if try < 1000 {
				continue
			}
			return nil, fmt.Errorf("pidfile %s: replaced again and again while being locked", n.PidFile), true
		}
		// Whatever stage failed, the child holds no lock now: a pidfile
		// the parent made is left empty, one there before is stale.
		// Neither is left behind (a node whose folder is gone is
		// stopped, not stale); a holder's is never removed.
		pidfile.RemoveStale(n.PidFile)
		switch stage {
		case forkSetsid:
			return nil, os.NewSyscallError("setsid", errno), true
		case forkChdir:
			return nil, &fs.PathError{Op: "chdir", Path: n.Dir, Err: errno}, true
		case forkLock:
			return nil, fmt.Errorf("pidfile %s: lock: %w", n.PidFile, errno), true
		case forkDup:
			return nil, fmt.Errorf("logfile %s: %w", n.LogFile, errno), true
		}
		switch stage {
		case forkWrite:
			return nil, fmt.Errorf("pidfile %s: cannot write the pid: %w", n.PidFile, errno), true
		case forkKeep:
			return nil, fmt.Errorf("pidfile %s: %w", n.PidFile, errno), true
		}
		xerr := &exec.Error{Name: n.Command[0], Err: errno}
		switch execFailKind(xerr) {
		case "noent":
			return nil, &stepError{msg: xerr.Error(), is: ErrCommandNotFound}, true
		case "noexec":
			return nil, &stepError{msg: xerr.Error(), is: ErrCommandNotExecutable}, true
		}
		return nil, errors.New(xerr.Error()), true
	}
}

// forkReport forks the child of s and reads its report: stage 0 once it
// has exec'd (its end of the pipe, close-on-exec, closed with nothing
// written), or the stage that failed and its errno.
func forkReport(s *forkSpec) (stage uint32, errno syscall.Errno, pid int, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, 0, 0, err
	}
	defer r.Close()
	if w.Fd() < 3 {
		w.Close()
		return 0, 0, 0, errLowFD
	}
	s.reportFD = int(w.Fd())
	// As os/exec does: no descriptor opened meanwhile without
	// close-on-exec (by code that sets it afterwards) leaks into the node.
	syscall.ForkLock.Lock()
	pid, e := forkNode(s)
	syscall.ForkLock.Unlock()
	w.Close()
	if e != 0 {
		return 0, 0, 0, os.NewSyscallError("fork", e)
	}
	var b [8]byte
	k, _ := io.ReadFull(r, b[:])
	if k < len(b) {
		return 0, 0, pid, nil
	}
	return binary.NativeEndian.Uint32(b[:4]), syscall.Errno(binary.NativeEndian.Uint32(b[4:])), pid, nil
}

// errLowFD: a descriptor the child needs is 0, 1 or 2, which it
// overwrites with its standard input, output and error.
var errLowFD = errors.New("descriptor below 3")

// mustFind returns the process of this process's unreaped child pid,
// which cannot have been reused: os.FindProcess cannot fail on Unix.
func mustFind(pid int) *os.Process {
	p, _ := os.FindProcess(pid)
	return p
}

// forkEnviron is the node's environment, as the exec step leaves it: its
// own, with its name, its pidfile and the locked descriptor's number
// (later entries win, as with os/exec).
func forkEnviron(env []string, n nodes.Node, fd int) []string {
	add := []string{
		nodes.EnvNode + "=" + n.FullName(),
		pidfile.EnvPidfile + "=" + n.PidFile,
		pidfile.EnvPidfileFD + "=" + strconv.Itoa(fd),
	}
	all := append(env[:len(env):len(env)], add...)
	at := make(map[string]int, len(all))
	out := make([]string, 0, len(all))
	for _, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// lookNode finds the program of n's command as the exec step does
// (lookCommand): a name with a slash as given (relative to n.Dir), else
// on the $PATH the node is started with, never through an empty or
// relative element. ok is false when it is not found there.
func lookNode(n nodes.Node, env []string) (string, bool) {
	name := n.Command[0]
	if strings.Contains(name, "/") {
		full := name
		if !filepath.IsAbs(name) && n.Dir != "" {
			full = filepath.Join(n.Dir, name)
		}
		return name, executable(full)
	}
	p, ok := lookPATH(env)
	if !ok {
		return "", false
	}
	for _, dir := range filepath.SplitList(p) {
		if !filepath.IsAbs(dir) {
			// The step refuses what it would find there (exec.ErrDot);
			// let it say so, or find it further on.
			return "", false
		}
		if path := filepath.Join(dir, name); executable(path) {
			return path, true
		}
	}
	return "", false
}

// executable: path names a file (not a folder) that this process may
// execute: os/exec's own check, which a name with a slash gets alone.
func executable(path string) bool {
	_, err := exec.LookPath(path)
	return err == nil
}

var (
	nullOnce sync.Once
	nullFile *os.File
	nullErr  error
)

// devNull is /dev/null, opened once, for the nodes' standard input.
func devNull() (*os.File, error) {
	nullOnce.Do(func() { nullFile, nullErr = os.OpenFile(os.DevNull, os.O_RDWR, 0) })
	return nullFile, nullErr
}

// maxFD is the highest descriptor this process can have open.
func maxFD() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || rl.Cur > 1<<20 {
		return 1 << 20
	}
	return int(rl.Cur) - 1
}
