//go:build linux && amd64

package launch

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// nofileLimit is the limit on descriptors a node is to start with.
type nofileLimit struct {
	lim     unix.Rlimit // the one multi was started with
	restore bool        // lim is lower than this process's
	ok      bool        // known; if not, the exec step starts every node
}

// callerNofile is the limit on descriptors multi was started with. The
// Go runtime raises its own soft limit at start, to the hard limit less
// one (its mark), and gives the original back to the children that
// package syscall starts (the exec step, and the node the step execs),
// but keeps it to itself. Such a child, traced so that it stops at its
// exec before it runs an instruction, shows it: probed once per process,
// and only when the runtime's mark says it raised the limit. A soft
// limit of 1024 under a higher hard one is what a program that uses
// select(2) needs, and what a shell would have given the node.
var callerNofile = sync.OnceValue(probeNofile)

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
	self, err := selfExe()
	if err != nil {
		return nofileLimit{}
	}
	p, err := os.StartProcess(self, []string{"multi: rlimit probe"}, &os.ProcAttr{
		Env: []string{},
		Sys: &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return nofileLimit{} // ptrace refused (seccomp, Yama, a tracer already): the exec step
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

// nofileFor is the limit the child is to set before its exec, as
// package syscall's children do: only while this process's own is still
// the one the runtime raised it to. ok is false when the exec step must
// start the node.
func nofileFor() (lim unix.Rlimit, set, ok bool) {
	c := callerNofile()
	if !c.ok {
		return lim, false, false
	}
	var cur unix.Rlimit
	if !c.restore || unix.Getrlimit(unix.RLIMIT_NOFILE, &cur) != nil || cur.Cur != c.lim.Max-1 || cur.Max != c.lim.Max {
		return lim, false, true
	}
	return c.lim, true, true
}
