//go:build unix

package launch

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/nodes"
)

// stepReadyEnv says, for a node with an fd:N readiness check (s6's
// notification-fd), which descriptor of the step holds the write end of
// the readiness pipe and which the node is to find it on: "FROM:N".
const stepReadyEnv = "_MULTI_STEP_READY_FD"

// readyFDOf is N of n's fd:N check, or 0.
func readyFDOf(n nodes.Node) int {
	c, err := nodes.ParseReady(n.Ready)
	if err != nil || c.Kind != "fd" {
		return 0
	}
	fd, _ := strconv.Atoi(c.Arg)
	return fd
}

// readyPipe, for a node with an fd:N check, makes its readiness pipe
// (ch.readyR, ch.readyW; spawnStep closes the write end once the step
// has its own): the write end goes to the step at N itself from the
// start, before the step's runtime can open a descriptor there; or,
// where the step's report pipe, working folder or cgroup folder is, beside
// them, for the step to move (moveReadyFD).
func (ch *Child) readyPipe(extra []*os.File, env []string) ([]*os.File, []string, error) {
	to := readyFDOf(ch.node)
	if to == 0 {
		return extra, env, nil
	}
	rr, rw, err := os.Pipe()
	if err != nil {
		return extra, env, err
	}
	at := max(3+len(extra), to)
	for 3+len(extra) <= at {
		extra = append(extra, nil) // not open in the step
	}
	extra[at-3] = rw
	ch.readyR, ch.readyW = rr, rw
	return extra, append(env[:len(env):len(env)], fmt.Sprintf("%s=%d:%d", stepReadyEnv, at, to)), nil
}

// movedReport is the step's report File that fd 3 was, when the node's
// readiness pipe took that number.
var movedReport *os.File

// moveReadyFD, in the exec step, puts the readiness pipe where the node
// expects it, N, when the step had it elsewhere because N is the step's
// report pipe (errFD, moved away first) or its working folder's
// descriptor (dirFD, closed already) or its cgroup folder's (kept
// elsewhere for the join): only a descriptor of the step's own is
// replaced. It returns N, whose close-on-exec flag the step
// clears last.
func moveReadyFD(spec string, report **os.File) (int, error) {
	a, b, _ := strings.Cut(spec, ":")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	cgfd := -1 // the node's cgroup folder, which the step joins later
	if v := os.Getenv(stepCgroupEnv); v != "" {
		cgfd, _ = strconv.Atoi(v)
	}
	if err1 != nil || err2 != nil || from < 3 || to < 3 || from != to && to != errFD && to != dirFD && to != cgfd {
		return -1, fmt.Errorf("exec step: bad %s %q", stepReadyEnv, spec)
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
		os.Setenv(stepCgroupEnv, strconv.Itoa(nfd))
	} else if to == errFD {
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
