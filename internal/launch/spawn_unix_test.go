//go:build unix

package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// A command that runs without holding its pidfile's lock (it closed the
// inherited descriptor before start could look) is killed and reported,
// rather than waited for forever; one that exited is reported as such.
func TestConfirmLockDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := nodes.Node{Name: "w1", PidFile: filepath.Join(dir, "w1.pid"), LogFile: filepath.Join(dir, "w1.log")}
	os.WriteFile(n.PidFile, []byte("12345\n"), 0o644) // stale, as the node left it
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = confirm(cmd, n)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("confirm blocked on a command that runs without its lock")
	}
	if err == nil || !strings.Contains(err.Error(), "let go of its pidfile's lock while running") ||
		!strings.Contains(err.Error(), fmt.Sprintf("killed it (pid %d", cmd.Process.Pid)) {
		t.Fatalf("confirm: %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", cmd.Process.Pid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command %d was not killed and reaped: %v", cmd.Process.Pid, err)
	}
	if _, err := os.Lstat(n.PidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale pidfile left: %v", err)
	}

	// Exited before confirm looks.
	cmd2 := exec.Command("sh", "-c", "exit 7")
	if err := cmd2.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.PollUntil(t, "the command exited", func() bool {
		p, err := proc.Read(cmd2.Process.Pid)
		return err != nil || p.Gone()
	})
	if _, err := confirm(cmd2, n); !errors.Is(err, ErrExitedAtOnce) || !strings.Contains(err.Error(), "status 7") {
		t.Fatalf("confirm of an exited command: %v", err)
	}
}
