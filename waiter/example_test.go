package waiter_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// Wait for a pidfile somebody else's process holds, here a node that runs
// for a tenth of a second: Wait returns once its lock is released, whether
// the process exited, was killed, or is a zombie nobody has reaped yet.
func ExampleWait() {
	rundir, _ := os.MkdirTemp("", "waiter-example")
	defer os.RemoveAll(rundir)
	ns, _ := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "0.1"}}.Nodes()
	// No settle window: this node is meant to exit soon after it starts.
	c := &multi.Cluster{Nodes: ns, RunDir: rundir, Settle: -1}
	if _, err := c.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	// Once it is gone, a stop still clears what its start made: the
	// stale pidfile and, as root, the node's cgroup.
	defer c.StopWait(context.Background(), multi.StopOptions{})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := waiter.Wait(ctx, ns[0].PidFile, waiter.Notify{})
	fmt.Println("released:", err == nil)

	info, _ := pidfile.Inspect(ns[0].PidFile)
	fmt.Println(info.State) // sleep does not remove its pidfile
	// Output:
	// released: true
	// stale
}
