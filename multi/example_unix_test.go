//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Start honours its context while it waits for a self-locking node to
// take its lock: here the node (sleep) never does, so when the deadline
// passes Start kills it and returns the context's error, with the pid it
// killed.
func ExampleCluster_Start_deadline() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)
	c, err := multi.FromSpec(nodes.Spec{
		Names:    []string{"w1"},
		RunDir:   rundir,
		Command:  []string{"sleep", "300"},
		SelfLock: true, // the node is to lock its pidfile itself
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := c.Start(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded), res[0].PID > 1)
	// Output:
	// true true
}

// Two Specs joined into one Cluster name w1 twice: nothing starts.
func ExampleErrDuplicateNode() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)
	a, _ := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: rundir, Command: []string{"sleep", "300"}}.Nodes()
	b, _ := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "300"}}.Nodes()
	c := &multi.Cluster{Nodes: append(a, b...), RunDir: rundir}
	_, err := c.Start(context.Background())
	fmt.Println(errors.Is(err, multi.ErrDuplicateNode))
	// Output:
	// true
}

// Act on some nodes only, and send them a signal that is not a stop (sleep
// ignores WINCH; a real node would reload on HUP, say).
func ExampleCluster_Only() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)
	c, _ := multi.FromSpec(nodes.Spec{Names: []string{"w1", "w2", "w3"}, RunDir: rundir, Command: []string{"sleep", "300"}})
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		fmt.Println(err)
	}
	defer c.StopWait(ctx, multi.StopOptions{})

	some, err := c.Only("w1", "w3")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := some.Send(ctx, syscall.SIGWINCH, multi.StopOptions{})
	for _, r := range res {
		fmt.Println(r.Node.Name, r.Outcome == multi.Signalled && r.Signal == syscall.SIGWINCH && r.PID > 1)
	}
	_, err = c.Only("w9")
	fmt.Println(errors.Is(err, multi.ErrUnknownNode))
	// Output:
	// w1 true
	// w3 true
	// true
}
