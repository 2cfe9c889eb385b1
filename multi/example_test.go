package multi_test

import (
	"context"
	"fmt"
	"os"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Start three nodes, check them, and stop them, waiting until each one's
// lock is released.
func ExampleCluster_StopWait() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)

	ns, err := nodes.Spec{
		Names:   []string{"w1", "w2", "w3"},
		RunDir:  rundir,                   // pidfiles, logfiles and records go here
		Command: []string{"sleep", "300"}, // %n, %i... are expanded per node
	}.Nodes()
	if err != nil {
		fmt.Println(err)
		return
	}
	c := &multi.Cluster{Nodes: ns, RunDir: rundir}
	ctx := context.Background()

	res, err := c.Start(ctx)
	if err != nil {
		fmt.Println(err)
	}
	for _, r := range res {
		fmt.Println(r.Node.Name, r.Outcome)
	}

	sts, _ := c.Status(ctx)
	for _, s := range sts {
		fmt.Println(s.Node.Name, s.State, s.PID == res[s.Node.Index-1].PID)
	}

	res, _ = c.StopWait(ctx, multi.StopOptions{})
	for _, r := range res {
		fmt.Println(r.Node.Name, r.Outcome)
	}
	// Output:
	// w1 started
	// w2 started
	// w3 started
	// w1 running true
	// w2 running true
	// w3 running true
	// w1 stopped
	// w2 stopped
	// w3 stopped
}

// Show progress while a large set starts: Progress sees each node's result
// as soon as it is known.
func ExampleCluster_Start_progress() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)
	ns, _ := nodes.Spec{Names: []string{"50"}, RunDir: rundir, Command: []string{"sleep", "300"}}.Nodes()

	done := 0
	c := &multi.Cluster{Nodes: ns, RunDir: rundir, Progress: func(r multi.Result) {
		done++ // calls never overlap
		if done%25 == 0 {
			fmt.Printf("%d/%d\n", done, len(ns))
		}
	}}
	if _, err := c.Start(context.Background()); err != nil {
		fmt.Println(err)
	}
	done = 0
	c.Kill(context.Background(), multi.StopOptions{})
	// Output:
	// 25/50
	// 50/50
	// 25/50
	// 50/50
}

// Restart a pool one node at a time: each node is stopped, started again
// and confirmed up before the next is signalled, so at most one is down.
// Without Rolling, every node is signalled and each is started again the
// moment it is down.
func ExampleCluster_Restart_rolling() {
	rundir, _ := os.MkdirTemp("", "multi-example")
	defer os.RemoveAll(rundir)

	ns, err := nodes.Spec{
		Names:   []string{"w1", "w2", "w3"},
		RunDir:  rundir,
		Command: []string{"sleep", "300"},
	}.Nodes()
	if err != nil {
		fmt.Println(err)
		return
	}
	c := &multi.Cluster{Nodes: ns, RunDir: rundir}
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		fmt.Println(err)
	}
	// Signalled sees each node as it goes down: in order, one at a time.
	down := func(r multi.Result) { fmt.Println("down:", r.Node.Name) }
	res, err := c.Restart(ctx, multi.RestartOptions{Rolling: true, Stop: multi.StopOptions{Signalled: down}})
	if err != nil {
		fmt.Println(err)
	}
	for _, r := range res {
		fmt.Println(r.Node.Name, r.Outcome)
	}
	c.StopWait(ctx, multi.StopOptions{})
	// Output:
	// down: w1
	// down: w2
	// down: w3
	// w1 restarted
	// w2 restarted
	// w3 restarted
}
