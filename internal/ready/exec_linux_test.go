package ready_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	p, err := ready.NewProbe(nodes.Node{Name: "w1", Ready: "exec:" + script, Dir: dir}, os.Environ(), -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("the check: %v", err)
	}
	b, err := os.ReadFile(kid)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("the check's child: %q", b)
	}
	// Pinned, so that the cleanup kills this process or none (a zombie,
	// one its new parent has not reaped yet, is gone).
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		t.Cleanup(func() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
	}
	testutil.PollUntil(t, "the check's child to be killed", func() bool {
		p, err := nodes.ReadProc(pid)
		return err != nil || p.Gone()
	})
}
