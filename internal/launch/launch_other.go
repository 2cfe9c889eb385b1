//go:build !unix

package launch

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// Nodes need sessions, POSIX record locks and exec: off Unix nothing
// starts, and every start fails with errors.ErrUnsupported.

// A Reaper would be a foreground run's one waiter; there is none here.
type Reaper struct{}

// Standby: no start waits for a lock here.
func (rp *Reaper) Standby(n nodes.Node) bool { return false }

// RunCheck: there is no run, and no reaper, here.
func (rp *Reaper) RunCheck(ctx context.Context, cmd *exec.Cmd) (int, error) {
	return 0, errors.ErrUnsupported
}

// Spawn fails: there is no exec step here.
func Spawn(_ context.Context, rp *Reaper, n nodes.Node, env []string, lockTimeout time.Duration) (*Child, error) {
	return nil, errors.ErrUnsupported
}

// Recheck fails: no node was started.
func (ch *Child) Recheck() error { return errors.ErrUnsupported }

// LetGo has nothing to let go of.
func (ch *Child) LetGo(detach bool) {}

// DefaultLockTimeout is how long a start waits for a self-locking node.
const DefaultLockTimeout = 10 * time.Second

func taskRoom() (room int, limit string, ok bool) { return 0, "", false }

// Exited: no child here.
func (ch *Child) Exited() bool { return true }

// LogOffset: no child here.
func (ch *Child) LogOffset() int64 { return -1 }

// Stop: no child here.
func (ch *Child) Stop(grace time.Duration) string { return "" }

// Wait: no child here.
func (ch *Child) Wait(ctx context.Context, timeout, grace time.Duration) error {
	return errors.ErrUnsupported
}
