// Package multi starts a set of named nodes (detached processes) and stops
// them again without ever signalling the wrong process:
//
//	ns, err := nodes.Spec{
//		Names:   []string{"w1", "w2", "w3"},
//		RunDir:  "/run/myapp",              // pidfiles, logfiles and records
//		Command: []string{"worker", "%n"}, // %n: the node's name
//	}.Nodes()
//	if err != nil {
//		return err
//	}
//	c := &multi.Cluster{Nodes: ns, RunDir: "/run/myapp"}
//	res, err := c.Start(ctx) // each node runs holding its pidfile's lock
//	...
//	res, err = c.StopWait(ctx, multi.StopOptions{Timeout: 10 * time.Second})
//
// Each node's own process holds its pidfile's lock for its whole life.
// A node is signalled only through that lock: its holder, pinned with a
// pidfd and checked against the node's record; StopWait waits for the
// lock to be released. Each [Result] says what a verb did to one node;
// [Cluster.Status] says what each is ([State]).
//
// Importing this package is enough to start nodes: where a node is not
// forked directly, this program runs again as the node's exec step,
// carried out by an init function before main (init functions before it
// should not start goroutines or print). A Cluster's verbs may run at
// once; it must not be copied after first use.
package multi

import (
	"sync"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// A Cluster is a set of nodes and how to start them; every zero field
// but Nodes has a default.
type Cluster struct {
	Nodes    []nodes.Node // from [nodes.Spec.Nodes]
	RunDir   string       // the records' folder, the Spec's; "" means [nodes.DefaultRunDir]
	Progress func(Result) // if not nil, gets each result once final, one call at a time
	// LockTimeout bounds how long Start waits for a self-locking node to
	// take its lock; 0 means 10 s.
	LockTimeout time.Duration
	// Detach lets go of each node at once instead of reaping it: for a
	// program that exits right after Start.
	Detach bool
	// Settle is the settle window: Start fails each node it started that
	// exits within it (with its exit status and last log lines); 0 means
	// [DefaultSettle] (3 s for celery's worker, beat...), negative none.
	Settle time.Duration
	// ReadyTimeout bounds how long Start waits for a node to pass its
	// readiness check ([ErrNotReady]; it has no settle window), or to end
	// if needed done ([nodes.AfterDone]); then stops it. 0 means 60 s.
	ReadyTimeout time.Duration
	// Env is the nodes' environment (nil: this process's), under each
	// node's own [nodes.Node.Env]; its PATH finds their commands.
	Env []string
	// AllowSharedFolders accepts folders others can write to
	// ([pidfile.UnsafeFolderError] otherwise); no record goes there.
	AllowSharedFolders bool
	Clean              bool // kill what is left of a lingering node's tree, not refuse it

	// progressMu makes Progress one call at a time across the verbs.
	progressMu sync.Mutex
}

// FromSpec returns a Cluster on s's nodes ([nodes.Spec.Nodes]), its
// RunDir s's.
func FromSpec(s nodes.Spec) (*Cluster, error) {
	ns, err := s.Nodes()
	if err != nil {
		return nil, err
	}
	return &Cluster{Nodes: ns, RunDir: s.RunDir}, nil
}
