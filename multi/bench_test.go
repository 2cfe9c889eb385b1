//go:build unix

package multi_test

// Benchmarks of the launcher: the start of one node (fork, the exec step's
// re-exec, lock, exec, confirm, record) and start plus stopwait of 100
// nodes. This test binary plays the exec step. They measure; they assert
// no timing. `make bench` runs them (see docs/benchmarks.md). Set
// MULTI_BENCH_DIR to put the rundir on another filesystem than the temp
// dir's.

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// benchRunDir: see [testutil.BenchDir].
var benchRunDir = testutil.BenchDir

func benchCluster(b *testing.B, rundir string, n int) *multi.Cluster {
	b.Helper()
	ns, err := nodes.Spec{Names: []string{strconv.Itoa(n)}, RunDir: rundir, Command: []string{"/bin/sleep", "300"}}.Nodes()
	if err != nil {
		b.Fatal(err)
	}
	return &multi.Cluster{Nodes: ns, RunDir: rundir}
}

// killAll SIGKILLs whatever holds the nodes' locks and waits until the
// locks are released, so that nothing outlives the benchmark.
func killAll(b *testing.B, c *multi.Cluster) {
	b.Helper()
	for _, n := range c.Nodes {
		if pid := testutil.Holder(n.PidFile); pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, n := range c.Nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		waiter.Wait(ctx, n.PidFile, nil)
		cancel()
		pidfile.RemoveStale(n.PidFile)
	}
}

// BenchmarkStartOne starts one node (`/bin/sleep 300`) and returns once
// it runs holding its lock; the node is killed outside the timer. "spawn"
// has no settle window (Settle -1): the start itself; "settled" has the
// default window, which a start of one node waits out whole.
func BenchmarkStartOne(b *testing.B) {
	for _, v := range []struct {
		name   string
		settle time.Duration
	}{{"spawn", -1}, {"settled", 0}} {
		b.Run(v.name, func(b *testing.B) {
			rundir := benchRunDir(b)
			c := benchCluster(b, rundir, 1)
			c.Settle = v.settle
			b.Cleanup(func() { killAll(b, c) })
			for range b.N {
				if _, err := c.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				killAll(b, c)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkStartStopWait100 starts 100 nodes and stopwaits them (they die
// at once on SIGTERM), with each wait strategy. start-µs/node and
// stopwait-µs/node split the time.
func BenchmarkStartStopWait100(b *testing.B) {
	for _, s := range []struct {
		name string
		s    waiter.Strategy
	}{{"poll", waiter.Poll{}}, {"notify", waiter.Notify{}}} {
		b.Run(s.name, func(b *testing.B) {
			rundir := benchRunDir(b)
			c := benchCluster(b, rundir, 100)
			o := multi.StopOptions{Wait: s.s}
			b.Cleanup(func() { killAll(b, c) })
			var start, stop time.Duration
			for range b.N {
				t0 := time.Now()
				if _, err := c.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := c.StopWait(context.Background(), o); err != nil {
					b.Fatal(err)
				}
				start += t1.Sub(t0)
				stop += time.Since(t1)
			}
			per := float64(b.N * len(c.Nodes))
			b.ReportMetric(float64(start.Microseconds())/per, "start-µs/node")
			b.ReportMetric(float64(stop.Microseconds())/per, "stopwait-µs/node")
		})
	}
}

// BenchmarkStopWaitTail measures stopwait's tail: from the last node's
// death, seen through a pidfd on each node, to StopWait's return (which
// includes removing the pidfiles still left then), as tail-µs, at N = 1,
// 100 and 1000 nodes that die at once on SIGTERM. Starting the nodes is
// outside the timer. Linux only (pidfds); elsewhere it is skipped.
func BenchmarkStopWaitTail(b *testing.B) {
	for _, s := range []struct {
		name string
		s    waiter.Strategy
	}{{"poll", waiter.Poll{}}, {"notify", waiter.Notify{}}} {
		for _, n := range []int{1, 100, 1000} {
			b.Run(s.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				rundir := benchRunDir(b)
				c := benchCluster(b, rundir, n)
				o := multi.StopOptions{Wait: s.s}
				b.Cleanup(func() { killAll(b, c) })
				var tail time.Duration
				for range b.N {
					b.StopTimer()
					if _, err := c.Start(context.Background()); err != nil {
						b.Fatal(err)
					}
					deaths := watchDeaths(b, c)
					b.StartTimer()
					if _, err := c.StopWait(context.Background(), o); err != nil {
						b.Fatal(err)
					}
					returned := time.Now()
					b.StopTimer()
					tail += returned.Sub(<-deaths)
				}
				b.ReportMetric(float64(tail.Microseconds())/float64(b.N), "tail-µs")
			})
		}
	}
}
