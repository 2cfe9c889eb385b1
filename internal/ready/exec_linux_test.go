package ready_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/ready"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// An exec check leaves nothing running: what its command forked is
// killed once the command is over, whether it ended (here) or was cut off
// at its deadline; run at every round of a start's wait and by every
// status --ready, a check that forks would otherwise pile processes up.
func TestExecCheckLeavesNothingRunning(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "check.sh")
	kid := filepath.Join(dir, "kid")
	body := "#!/bin/sh\nsleep 300 &\necho $! > " + kid + "\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	check, err := nodes.ParseReady("exec:" + script)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ready.NewProbe(nodes.Node{Name: "w1", Ready: check, Dir: dir}, os.Environ(), -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("the check: %v", err)
	}
	pid := testutil.ReadPID(t, kid)
	testutil.KillAtCleanup(t, pid) // this process or none
	testutil.PollUntil(t, "the check's child to be killed", func() bool {
		p, err := proc.Read(pid)
		return err != nil || p.Gone()
	})
}
