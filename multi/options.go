package multi

import (
	"syscall"
	"time"

	"github.com/multi-launcher/multi/waiter"
)

// StopOptions tune the verbs that signal nodes. The zero value is the
// default; a verb never changes them.
type StopOptions struct {
	Signal  syscall.Signal  // stops a node; 0 means SIGTERM
	Timeout time.Duration   // if positive, SIGKILL after it; 0 waits while ctx lasts
	Wait    waiter.Strategy // how locks are waited for; nil: [waiter.Default]
	// Group signals each node's process group (supervisord's
	// stopasgroup), once its holder is pinned and seen to lead it.
	Group bool
	// Lost signals a lost node ([LostError]) too, once pinned and checked
	// against its record.
	Lost      bool
	Signalled func(Result) // if not nil, gets each node signalled, before the wait
}

// RestartOptions tune [Cluster.Restart]. The zero value is the default.
type RestartOptions struct {
	Stop StopOptions // how each node stops before it starts again
	// Rolling restarts MaxUnavailable nodes at a time (0: one), each
	// group up (and ready) before the next goes down.
	Rolling        bool
	MaxUnavailable int
}
