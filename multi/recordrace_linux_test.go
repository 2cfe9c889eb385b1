package multi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Two multis start the same nodes at once, with different commands and
// then with the same one: each node runs once, and its record names the
// command that runs and the process that holds its lock, whichever start
// won. Starts of one node take turns on its record; the loser leaves the
// winner's record as it is (and, given another command, says so).
func TestConcurrentStartsKeepRecordWhole(t *testing.T) {
	names := make([]string, 60)
	for i := range names {
		names[i] = "w" + strconv.Itoa(i+1)
	}
	for _, cmds := range [][2]string{{"300", "301"}, {"302", "302"}} {
		a := cluster(t, "", names...)
		var cs [2]*multi.Cluster
		for k := range cs {
			ns := append([]nodes.Node(nil), a.Nodes...)
			for i := range ns {
				ns[i].Command = []string{"sleep", cmds[k]}
			}
			// No settle window: the record is what is tested.
			cs[k] = &multi.Cluster{Nodes: ns, RunDir: a.RunDir, Env: a.Env, Settle: -1}
		}
		var res [2][]multi.Result
		var wg sync.WaitGroup
		for k := range cs {
			wg.Go(func() { res[k], _ = cs[k].Start(context.Background()) })
		}
		// Meanwhile, as status would: once a record names the process
		// that runs the node, it names it until the node stops.
		done := make(chan struct{})
		var reader sync.WaitGroup
		reader.Go(func() {
			seen := map[string]int{}
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, n := range a.Nodes {
					_, st, err := record.ReadStarted(a.RunDir, n.Name)
					if was := seen[n.Name]; err == nil && was > 0 && st.PID != was {
						t.Errorf("%s: the record named pid %d, then %d, while the node ran", n.Name, was, st.PID)
						seen[n.Name] = -1 // said once
					}
					if err == nil && st.PID != 0 && seen[n.Name] == 0 {
						seen[n.Name] = st.PID
					}
				}
			}
		})
		wg.Wait()
		close(done)
		reader.Wait()
		for i, n := range a.Nodes {
			started := 0
			for k := range res {
				switch r := res[k][i]; {
				case r.Outcome == multi.Started:
					started++
				case cmds[0] != cmds[1] && !errors.Is(r.Err, multi.ErrOtherCommand):
					// The loser finds the node running the other command.
					t.Errorf("%s: %v; want started or already running another command", n.Name, r.Err)
				case cmds[0] == cmds[1] && (r.Outcome != multi.AlreadyRunning || r.Err != nil):
					t.Errorf("%s: %v; want started or already running", n.Name, r.Err)
				}
			}
			if started != 1 {
				t.Errorf("%s started %d times; want once", n.Name, started)
				continue
			}
			info, err := pidfile.Inspect(n.PidFile)
			if err != nil || info.State != pidfile.Running {
				t.Errorf("%s: %+v, %v; want running", n.Name, info, err)
				continue
			}
			rec, st, err := record.ReadStarted(a.RunDir, n.Name)
			runs := cmdline(info.PID)
			switch {
			case err != nil:
				t.Errorf("%s: record: %v", n.Name, err)
			case st.PID != info.PID:
				t.Errorf("%s (sleep %s/%s): record names pid %d; pid %d holds the lock", n.Name, cmds[0], cmds[1], st.PID, info.PID)
			case strings.Join(rec.Command, " ") != runs:
				t.Errorf("%s: record names %q; pid %d runs %q", n.Name, rec.Command, info.PID, runs)
			}
		}
		if _, err := a.StopWait(context.Background(), multi.StopOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// cmdline is the command line pid runs, its arguments joined by spaces.
func cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return err.Error()
	}
	return string(bytes.Join(bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}), []byte(" ")))
}
