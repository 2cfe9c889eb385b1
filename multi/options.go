package multi

import (
	"syscall"
	"time"

	"github.com/multi-launcher/multi/waiter"
)

// StopOptions tune the verbs that signal nodes: [Cluster.Stop],
// [Cluster.StopWait], [Cluster.Kill], [Cluster.Send], and the stops of
// [Cluster.Restart] and [Cluster.Run]. They are given per call: the zero
// value is the default, and a verb never changes them or the Cluster.
type StopOptions struct {
	// Signal is what Stop, StopWait, Restart and Run send to stop a node;
	// 0 means SIGTERM. Kill sends SIGKILL and Send its own signal.
	Signal syscall.Signal
	// Timeout, if positive, bounds how long StopWait and Restart wait after
	// Signal before they send SIGKILL. Zero means wait until ctx is done
	// (for Run: [DefaultRunTimeout]).
	Timeout time.Duration
	// Wait is how StopWait, Kill and Restart wait for locks to be
	// released; nil means [waiter.Default] (polling).
	Wait waiter.Strategy
	// Group, if set, signals each node's whole process group, as
	// supervisord's stopasgroup and killasgroup do, so that children the
	// node forked get the signal too (the SIGKILL after Timeout as well).
	// The group is signalled only once the lock holder is pinned, seen to
	// still hold the lock, and confirmed to lead its own process group (a
	// node does: it starts a new session); otherwise the node fails and
	// nothing is signalled. Never a group <= 1 or multi's own. Only the
	// holder is waited for: children that outlive it are not. Without
	// Group only the holder is signalled.
	Group bool
	// Lost makes the verb signal a lost node (see [LostError]) too,
	// through a pidfd, once its pidfd inode (where the kernel has pidfs)
	// or its start time is seen to match its record; without it a lost
	// node fails and is left alone.
	Lost bool
	// Signalled, if not nil, is called by StopWait, Kill and Restart with
	// each node they signalled and are about to wait for (Result.PID is
	// the process), before the wait, from one goroutine; a caller can so
	// show what is being waited for. It may run while Progress does.
	Signalled func(Result)
}

// RestartOptions tune [Cluster.Restart]. The zero value is the default.
type RestartOptions struct {
	// Stop tunes how each node is stopped before it starts again.
	Stop StopOptions
	// Rolling restarts one node at a time, in order: each is stopped,
	// started again and confirmed up (holding its lock, past the settle
	// window, or passing its readiness check) before the next is signalled, so that no two nodes are down
	// at once. Without it Restart signals every node and starts each again
	// the moment it is down.
	Rolling bool
	// MaxUnavailable, with Rolling, lets up to that many nodes be down at
	// once: each group of MaxUnavailable nodes is stopped, and each node
	// started again and (with a readiness check) ready, before the next
	// group goes down. 0 or 1 means one at a time.
	MaxUnavailable int
}
