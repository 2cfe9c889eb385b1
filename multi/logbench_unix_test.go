//go:build unix

package multi_test

// The log writer's cost to a node (issue 34's target: at most 5% of the
// throughput of a node writing lines as fast as it can): a node that
// writes 100-byte lines, one write(2) per line ("line"), 4 KiB at a time
// (a C or Python program's buffered stdout: "4k") or 64 KiB ("block"),
// to its logfile itself ("direct") or through its log writer under
// --log-max-size=8M ("writer": four rotations in each run). The node
// times its own writes of benchLogBytes after benchWarmBytes untimed
// (the writer starts as the node does, not before); the benchmark
// reports its MB/s. It measures; it asserts no timing. Run it with
//
//	go test -run '^$' -bench LogWriter -benchtime 10x -count 3 ./multi

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
)

func BenchmarkLogWriter(b *testing.B) {
	for _, out := range []string{"direct", "writer"} {
		for _, w := range []struct {
			name  string
			chunk int
		}{{"line", 1}, {"4k", 4 << 10 / benchLineLen}, {"block", 64 << 10 / benchLineLen}} {
			b.Run(out+"/"+w.name, func(b *testing.B) {
				rundir := benchRunDir(b)
				var total time.Duration
				for i := 0; i < b.N; i++ {
					report := filepath.Join(rundir, "report")
					os.Remove(report)
					s := nodes.Spec{Names: []string{"w"}, RunDir: rundir, Command: []string{os.Args[0], "-test.run=^$"},
						Env: []string{nodeEnv + "=lines", "MULTI_BENCH_CHUNK=" + strconv.Itoa(w.chunk), "MULTI_BENCH_REPORT=" + report}}
					if out == "writer" {
						s.Limits.Set("log_max_size", "8M")
						s.Limits.Set("log_keep", "1")
					}
					ns, err := s.Nodes()
					if err != nil {
						b.Fatal(err)
					}
					c := &multi.Cluster{Nodes: ns, RunDir: rundir, Settle: -1}
					if _, err := c.Start(context.Background()); err != nil {
						b.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					err = waiter.Wait(ctx, ns[0].PidFile, nil)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					took, err := os.ReadFile(report)
					if err != nil {
						b.Fatal("the node did not finish: ", err)
					}
					d, _ := strconv.ParseInt(string(took), 10, 64)
					total += time.Duration(d)
					if out == "writer" {
						waitEndMarker(b, ns[0].LogFile)
					}
					os.Remove(ns[0].LogFile)
					os.Remove(ns[0].LogFile + ".1")
				}
				b.ReportMetric(float64(benchLogBytes)*float64(b.N)/total.Seconds()/1e6, "node-MB/s")
			})
		}
	}
}

// waitEndMarker waits until the log writer has written the node's end
// marker: the writer is done, and the next round has the machine.
func waitEndMarker(b *testing.B, path string) {
	deadline := time.Now().Add(time.Minute)
	for delay := time.Millisecond; time.Now().Before(deadline); delay = min(2*delay, 50*time.Millisecond) {
		f, err := os.Open(path)
		if err == nil {
			st, _ := f.Stat()
			tail := make([]byte, min(st.Size(), 200))
			f.ReadAt(tail, st.Size()-int64(len(tail)))
			f.Close()
			if strings.Contains(string(tail), " ended: ") {
				return
			}
		}
		time.Sleep(delay)
	}
	b.Fatal("the log writer wrote no end marker in", path)
}
