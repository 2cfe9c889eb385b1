//go:build unix

package multi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A node found not running whose pidfile another process locked before
// its stale pidfile could be removed is NotRunning with that process in
// HeldBy: PID stays 0, for a process the verb never signalled is not the
// node's. (This process holds the lock here: the one the removal meets.)
func TestNotRunningTakenMeanwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w1.pid")
	l, err := pidfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	c := &Cluster{RunDir: filepath.Dir(path)}
	r := Result{Node: nodes.Node{Name: "w1", PidFile: path}}
	c.call(StopOptions{}.plan()).notRunning(&r, "stop", pidfile.Info{Path: path, State: pidfile.Stale}, nil)
	if r.Err != nil || r.Outcome != NotRunning || r.PID != 0 || r.HeldBy != os.Getpid() {
		t.Errorf("%s: err %v, outcome %d, pid %d, held by %d; want not running, pid 0, held by %d",
			r.Node.Name, r.Err, r.Outcome, r.PID, r.HeldBy, os.Getpid())
	}
}
