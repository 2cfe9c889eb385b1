package multi_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Apply touches only what changed: unchanged nodes keep their process, a
// node whose command changed is restarted, a stopped one started, and a
// node no longer described (ApplyOptions.Remove) is stopped and forgotten.
// A dry run says the same and changes nothing.
func TestApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := cluster(t, "", "a1", "a2", "a3")
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a1, a2 := holderOf(t, c.Nodes[0]), holderOf(t, c.Nodes[1])
	changes, err := c.Apply(ctx, multi.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Action != multi.Keep || ch.Result.Outcome != multi.AlreadyRunning || len(ch.Why) != 0 {
			t.Errorf("unchanged %s: %+v; want Keep", ch.Result.Node.Name, ch)
		}
	}

	// a2's command changes, a3 stops; a3 is then described no more.
	want := &multi.Cluster{Nodes: slices.Clone(c.Nodes[:2]), RunDir: c.RunDir, Env: c.Env}
	want.Nodes[1].Command = []string{"sleep", "301"}
	sub, err := c.Only("a3")
	if err != nil {
		t.Fatal(err)
	}
	gone := sub.Nodes[0]
	plan, err := want.Apply(ctx, multi.ApplyOptions{DryRun: true, Remove: []nodes.Node{gone}})
	if err != nil {
		t.Fatal(err)
	}
	acts := func(cs []multi.Change) (out []multi.Action) {
		for _, ch := range cs {
			out = append(out, ch.Action)
		}
		return out
	}
	if got := acts(plan); !slices.Equal(got, []multi.Action{multi.Keep, multi.Replace, multi.Withdraw}) || !slices.Equal(plan[1].Why, []string{"command"}) {
		t.Fatalf("dry run: %v, why %q; want keep, restart (command), stop", got, plan[1].Why)
	}
	if holderOf(t, c.Nodes[1]) != a2 || holderOf(t, gone) <= 0 {
		t.Fatal("the dry run touched a node")
	}

	changes, err = want.Apply(ctx, multi.ApplyOptions{Remove: []nodes.Node{gone}})
	if err != nil {
		t.Fatal(err)
	}
	if got := acts(changes); !slices.Equal(got, []multi.Action{multi.Keep, multi.Replace, multi.Withdraw}) {
		t.Fatalf("apply: %v", got)
	}
	if holderOf(t, c.Nodes[0]) != a1 || changes[0].Result.PID != a1 {
		t.Error("a1 was touched")
	}
	if pid := holderOf(t, c.Nodes[1]); pid == a2 || changes[1].Result.Outcome != multi.Restarted {
		t.Errorf("a2: %v, pid %d (was %d); want restarted", changes[1].Result, pid, a2)
	}
	if changes[2].Result.Outcome != multi.Stopped {
		t.Errorf("a3: %v; want stopped", changes[2].Result)
	}
	if _, err := os.Stat(filepath.Join(c.RunDir, "a3.node")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a3's record: %v; want it forgotten", err)
	}

	// a1 stopped: Apply starts it again.
	one, err := want.Only("a1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.StopWait(ctx, multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	changes, err = want.Apply(ctx, multi.ApplyOptions{})
	if err != nil || changes[0].Action != multi.StartIt || changes[0].Result.Outcome != multi.Started || changes[1].Action != multi.Keep {
		t.Fatalf("after a1 stopped: %+v, %v; want a1 started, a2 kept", acts(changes), err)
	}
}
