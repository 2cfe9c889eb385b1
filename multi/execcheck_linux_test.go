package multi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// An exec check whose command daemonizes (setsid, out of the check's
// session) leaves nothing running: in a node with a cgroup, each try runs
// in a folder of its own beside the node's, killed with it. Neither a
// start's tries nor status --ready's leave a process.
func TestExecCheckDaemonLeavesNothing(t *testing.T) {
	testutil.NeedRoot(t)
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// Each try leaves a daemon, which says its pid before the try fails.
	script := filepath.Join(dir, "check.sh")
	body := `#!/bin/sh
n=$(cat "$1" 2>/dev/null | wc -l)
setsid sh -c 'echo $$ >> "$0"; exec sleep 300' "$1" </dev/null >/dev/null 2>&1 &
while [ "$(cat "$1" 2>/dev/null | wc -l)" -le "$n" ]; do sleep 0.01; done
exit 1
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c := cluster(t, "", "w1")
	c.ReadyTimeout = 500 * time.Millisecond // the check never passes
	rc, err := nodes.ParseReady("exec:" + script + " " + pids)
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes[0].Ready = rc
	res, err := c.Start(t.Context())
	t.Cleanup(func() {
		for _, pid := range daemons(t, pids) {
			testutil.KillAtCleanup(t, pid)
		}
	})
	if !errors.Is(err, multi.ErrNotReady) {
		t.Fatalf("w1: %+v, %v; want ErrNotReady", res[0], err)
	}
	if res[0].Node.Cgroup == "" {
		t.Skip("no cgroup here: the check's session alone is killed, and a daemon leaves it")
	}
	if emu := testutil.Emulator(); emu != "" {
		// A start in a given cgroup needs clone3, which qemu-user lacks.
		t.Skip("under " + emu + ", no clone3: the check's session alone is killed, and a daemon leaves it")
	}
	left := func(what string) {
		t.Helper()
		tries := daemons(t, pids)
		if len(tries) == 0 {
			t.Fatalf("%s: the check never ran", what)
		}
		for _, pid := range tries {
			testutil.PollUntil(t, what+": the daemon of a try, pid "+strconv.Itoa(pid)+", to be gone", func() bool {
				p, err := proc.Read(pid)
				return err != nil || p.Gone() // a zombie is gone
			})
		}
	}
	left("start")
	// A node that runs, with the same check: status --ready runs it once.
	os.Remove(pids)
	c.Nodes[0].Ready = nodes.ReadyCheck{}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill(context.Background(), multi.StopOptions{}) })
	sc := c
	sc.Nodes[0].Ready = rc
	sts, _ := sc.Status(t.Context())
	if sts[0].Ready != multi.Starting && sts[0].Ready != multi.Unready {
		t.Fatalf("status: %+v; want the check failing", sts[0])
	}
	left("status")
}

// daemons are the pids the check's daemons wrote.
func daemons(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			out = append(out, pid)
		}
	}
	return out
}
