//go:build unix

package multi_test

import (
	"context"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// A Cluster is safe for concurrent use (run under -race): verbs of one
// Cluster at once, Progress from all of them, and two Starts of the same
// nodes start each node once.
func TestClusterConcurrentUse(t *testing.T) {
	c := cluster(t, "", "w1", "w2", "w3")
	progress := 0
	// No lock here: Progress is called one call at a time.
	c.Progress = func(multi.Result) { progress++ }
	ctx := context.Background()
	var wg sync.WaitGroup
	starts := make([][]multi.Result, 2)
	for i := range starts {
		wg.Go(func() { starts[i], _ = c.Start(ctx) })
	}
	wg.Go(func() { c.Status(ctx) })
	wg.Go(func() { c.Only("w1", "w2") })
	wg.Go(func() { c.Send(ctx, syscall.SIGWINCH, multi.StopOptions{}) }) // ignored by sleep
	wg.Wait()
	for i, n := range c.Nodes {
		started := 0
		for _, res := range starts {
			r := res[i]
			switch {
			case r.Outcome == multi.Started:
				started++
			case r.Outcome != multi.AlreadyRunning || r.Err != nil:
				t.Errorf("%s: %v; want started or already running", n.Name, r.Err)
			}
		}
		if started != 1 {
			t.Errorf("%s started %d times; want once", n.Name, started)
		}
	}
	res, err := c.StopWait(ctx, multi.StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.PID <= 1 {
			t.Errorf("%s: %s; want stopped", r.Node.Name, r)
		}
	}
	if progress < 2*len(c.Nodes) {
		t.Errorf("Progress called %d times; want at least %d", progress, 2*len(c.Nodes))
	}
}

// FromSpec puts records, pidfiles and logfiles in the Spec's one run
// folder.
func TestFromSpecOneRunDir(t *testing.T) {
	dir := t.TempDir()
	c, err := multi.FromSpec(nodes.Spec{Names: []string{"w1"}, RunDir: dir, Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.RunDir != dir {
		t.Fatalf("RunDir %q; want %q", c.RunDir, dir)
	}
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.StopWait(ctx, multi.StopOptions{})
	for _, f := range []string{record.Path(dir, "w1"), c.Nodes[0].PidFile, c.Nodes[0].LogFile} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%v; want it in %s", err, dir)
		}
	}
}
