//go:build unix

package launch

import (
	"fmt"
	"os"

	"github.com/multi-launcher/multi/nodes"
)

// readyFDOf is N of n's fd:N check, or 0.
func readyFDOf(n nodes.Node) int { return n.Ready.FD() }

// readyPipe, for a node with an fd:N check, makes its readiness pipe
// (ch.readyR, ch.readyW; spawnStep closes the write end once the step
// has its own): the write end goes to the step at N itself from the
// start, before the step's runtime can open a descriptor there; or,
// where the step's report pipe, working folder or cgroup folder is, beside
// them, for the step to move (package step).
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
