//go:build unix

package waiter_test

// Benchmarks of the waiter: the cost of waiting on many released
// pidfiles, and how soon Poll and Notify see a holder's death. They
// measure; they assert no timing. `make bench` runs them (see
// docs/benchmarks.md). Set MULTI_BENCH_DIR to put their files on another
// filesystem than the temp dir's.

import (
	"context"
	"github.com/multi-launcher/multi/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/waiter"
)

// benchDir: see [testutil.BenchDir].
var benchDir = testutil.BenchDir

// startHolder starts this test binary holding path's lock (it keeps the
// file when it dies, as a crash would) and returns it once it holds.
func startHolder(b *testing.B, path string) *exec.Cmd {
	b.Helper()
	cmd, _ := testutil.StartHolder(b, path, testutil.HoldCrash)
	return cmd
}

// BenchmarkWaitAllReleased is WaitAll on 1000 pidfiles nobody holds any
// more (the nodes died before the wait began): one open, one lock test and
// one close per target. ns/target is the per-node cost.
func BenchmarkWaitAllReleased(b *testing.B) {
	for _, s := range []struct {
		name string
		s    waiter.Strategy
	}{{"poll", waiter.Poll{}}, {"notify", waiter.Notify{}}} {
		b.Run(s.name, func(b *testing.B) {
			dir := benchDir(b)
			targets := make([]waiter.Target, 1000)
			for i := range targets {
				p := filepath.Join(dir, strconv.Itoa(i)+".pid")
				if err := os.WriteFile(p, []byte("12345\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				targets[i] = waiter.Target{Path: p, PID: 12345}
			}
			b.ResetTimer()
			for range b.N {
				n := 0
				if err := waiter.WaitAll(context.Background(), targets, s.s, func(waiter.Target, error) { n++ }); err != nil || n != len(targets) {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(targets)), "ns/target")
		})
	}
}

// BenchmarkWakeAfterKill measures how long WaitAll takes to return after
// the holder of the lock is SIGKILLed, as the metric wake-µs (from the
// kill(2) to WaitAll's return, so the kernel's exit of the holder is in
// it). "now": the kill comes right before the wait, as in stopwait. "late":
// the holder dies 20ms into the wait, when Poll has backed off. ns/op
// includes starting the holder process and is not the point.
func BenchmarkWakeAfterKill(b *testing.B) {
	for _, s := range []struct {
		name string
		s    waiter.Strategy
	}{{"poll", waiter.Poll{}}, {"notify", waiter.Notify{}}} {
		for _, late := range []time.Duration{0, 20 * time.Millisecond} {
			name := s.name + "/now"
			if late > 0 {
				name = s.name + "/late"
			}
			b.Run(name, func(b *testing.B) {
				dir := benchDir(b)
				var total time.Duration
				for i := range b.N {
					path := filepath.Join(dir, strconv.Itoa(i)+".pid")
					cmd := startHolder(b, path)
					pid := cmd.Process.Pid
					killed := make(chan time.Time, 1)
					kill := func() {
						killed <- time.Now()
						syscall.Kill(pid, syscall.SIGKILL)
					}
					if late == 0 {
						kill()
					} else {
						time.AfterFunc(late, kill)
					}
					if err := waiter.WaitAll(context.Background(), []waiter.Target{{Path: path, PID: pid}}, s.s, nil); err != nil {
						b.Fatal(err)
					}
					total += time.Since(<-killed)
					cmd.Wait()
					os.Remove(path)
				}
				b.ReportMetric(float64(total.Microseconds())/float64(b.N), "wake-µs")
			})
		}
	}
}
