package multi_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// A Cluster on nodes from nodes.Spec.Nodes, as the package doc builds
// one (no record read: the node carries no cgroup), sees in status and
// stops the tree its start recorded. A process that left the node's
// session is killed with it, and the node's cgroup folder and the
// rundir's are removed. Without the record's cgroup the stop took the
// session for the tree: that process lived on, and both folders stayed.
func TestSpecNodesStopTheirRecordedTree(t *testing.T) {
	testutil.NeedRoot(t)
	dir := t.TempDir()
	escapedFile := filepath.Join(dir, "escaped")
	c, err := multi.FromSpec(nodes.Spec{Names: []string{"w1"}, RunDir: dir,
		Command: []string{"sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$0" & exec sleep 300`, escapedFile}})
	if err != nil {
		t.Fatal(err)
	}
	c.Settle = -1
	var escaped int
	pidfd := -1 // the escaped process, pinned: killed through it at the end
	t.Cleanup(func() {
		if pidfd >= 0 {
			unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
			unix.Close(pidfd)
		}
		c.Kill(context.Background(), multi.StopOptions{})
	})
	res, err := c.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cg := res[0].Node.Cgroup
	if cg == "" {
		t.Skip("no cgroup here: the node's containment is its session")
	}
	if c.Nodes[0].Cgroup != "" {
		t.Fatalf("the Cluster's node names cgroup %s; want none, as nodes.Spec.Nodes leaves it", c.Nodes[0].Cgroup)
	}
	testutil.PollUntil(t, "the escaped process's pid", func() bool {
		b, _ := os.ReadFile(escapedFile)
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return escaped > 1
	})
	if pidfd, err = unix.PidfdOpen(escaped, 0); err != nil {
		t.Fatal(err)
	}
	if sid, _ := unix.Getsid(escaped); sid != escaped {
		t.Fatalf("pid %d is in session %d; want a session of its own", escaped, sid)
	}
	sts, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tr := sts[0].Tree; tr.Cgroup != cg || tr.Procs != 2 {
		t.Errorf("status: w1's tree is %+v; want cgroup %s with 2 processes", tr, cg)
	}
	if _, err := c.StopWait(context.Background(), multi.StopOptions{Timeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	if !exited(escaped) {
		t.Errorf("pid %d, which left w1's session but not its cgroup, still runs after stopwait", escaped)
	}
	for _, d := range []string{cg, filepath.Dir(cg)} {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup folder %s after stopwait: %v; want it removed", d, err)
		}
	}
}
