package multi_test

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// nothingStarted fails t unless no node of c has a pidfile or a record.
func nothingStarted(t *testing.T, c *multi.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		if _, err := os.Stat(n.PidFile); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: pidfile: %v; want none", n.Name, err)
		}
		if _, err := record.Read(c.RunDir, n.Name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: record: %v; want none", n.Name, err)
		}
	}
}

// A cgroup v2 limit where the nodes have no cgroup of their own (session
// containment) fails the start of every node, saying why, and starts
// nothing: a node never runs without a limit it was given. A restart
// that would add one leaves the node running as it was.
func TestCgroupLimitRefusedUnderSession(t *testing.T) {
	t.Setenv("MULTI_CONTAINMENT", "session")
	c := cluster(t, "", "w1", "w2")
	c.Nodes[0].Limits.MemoryMax = "536870912"
	res, err := c.Start(t.Context())
	if !errors.Is(err, multi.ErrLimitUnavailable) {
		t.Errorf("Start: %v; want ErrLimitUnavailable", err)
	}
	for _, r := range res {
		if r.Outcome != multi.Failed || !errors.Is(r.Err, multi.ErrLimitUnavailable) {
			t.Errorf("%q; want FAILED, ErrLimitUnavailable", r)
		}
	}
	if want := "--memory-max: controller memory not available: nodes here have no cgroup of their own, their containment is their session (MULTI_CONTAINMENT=session); nothing started"; !strings.Contains(res[0].String(), want) {
		t.Errorf("w1: %q; want %q", res[0], want)
	}
	if want := "w1's limits cannot apply"; !strings.Contains(res[1].String(), want) {
		t.Errorf("w2: %q; want %q", res[1], want)
	}
	nothingStarted(t, c)

	// Running without one, then restarted with one: left running.
	c.Nodes[0].Limits = nodes.Limits{}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := holderOf(t, c.Nodes[0])
	c.Nodes[0].Limits.PidsMax = "64"
	res, err = c.Restart(t.Context(), multi.RestartOptions{})
	if !errors.Is(err, multi.ErrLimitUnavailable) || res[0].Outcome != multi.Failed {
		t.Errorf("Restart with --pids-max: %v, %q; want it refused", err, res[0])
	}
	if now := holderOf(t, c.Nodes[0]); now != old {
		t.Errorf("w1 runs as pid %d after the refused restart; want %d, left running", now, old)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A node's rlimits are recorded with it; one that cannot be set fails
// its start, naming it, and leaves no pidfile and no record.
func TestStartLimits(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1")
	c.Nodes[0].Limits = nodes.Limits{NOFILE: "64", Core: "0"}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(c.RunDir, "w1")
	if err != nil || rec.Limits != c.Nodes[0].Limits {
		t.Errorf("record: %+v, %v; want the limits %+v", rec.Limits, err, c.Nodes[0].Limits)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(holderOf(t, c.Nodes[0])) + "/limits")
	if err == nil && !strings.Contains(string(b), "Max open files            64                   64") {
		t.Errorf("the node's limits:\n%s\nwant Max open files 64 64", b)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}

	b, err = os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		t.Skip("no /proc/sys/fs/nr_open:", err)
	}
	nrOpen, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	c = cluster(t, "", "w2")
	over := strconv.FormatUint(nrOpen+1, 10)
	c.Nodes[0].Limits = nodes.Limits{NOFILE: "64:" + over}
	res, err := c.Start(t.Context())
	if want := "--limit-nofile=64:" + over + ": cannot set RLIMIT_NOFILE: operation not permitted"; err == nil || !strings.Contains(res[0].String(), want) {
		t.Errorf("Start with a hard limit above fs.nr_open: %v, %q; want FAILED: %s", err, res[0], want)
	}
	nothingStarted(t, c)
}

// Apply restarts a node whose limits changed, saying so, and the node
// runs under the new ones.
func TestApplyLimitsChanged(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "a1")
	c.Nodes[0].Limits.NOFILE = "64"
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := holderOf(t, c.Nodes[0])
	c.Nodes[0].Limits.NOFILE = "128"
	changes, err := c.Apply(t.Context(), multi.ApplyOptions{})
	if err != nil || changes[0].Action != multi.Replace || len(changes[0].Why) != 1 || changes[0].Why[0] != "limits" {
		t.Fatalf("Apply with nofile 64 -> 128: %+v, %v; want a restart, why limits", changes, err)
	}
	now := holderOf(t, c.Nodes[0])
	b, err := os.ReadFile("/proc/" + strconv.Itoa(now) + "/limits")
	if now == old || err != nil || !strings.Contains(string(b), "Max open files            128                  128") {
		t.Errorf("after apply: pid %d (was %d), limits:\n%s\nwant a new process, Max open files 128", now, old, b)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}
