package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// killLeftovers makes sure no node of names in dir outlives the test: if
// one still holds its pidfile's lock, the library's kill takes it down.
func killLeftovers(t *testing.T, dir string, names ...string) {
	t.Cleanup(func() {
		ns, err := nodes.Spec{Names: names, RunDir: dir}.Nodes()
		if err != nil {
			t.Error(err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, _ := (&multi.Cluster{Nodes: ns, RunDir: dir}).Kill(ctx, multi.StopOptions{})
		for _, r := range res {
			if r.PID > 0 {
				t.Logf("cleanup killed %s", r)
			}
		}
	})
}

// holder is the pid holding n's pidfile lock, as the kernel says.
func holder(t *testing.T, dir, name string) int {
	t.Helper()
	info, err := pidfile.Inspect(filepath.Join(dir, name+".pid"))
	if err != nil || info.State != pidfile.Running {
		t.Fatalf("%s: %+v, %v; want running", name, info, err)
	}
	return info.PID
}

// A node started, seen running, stopped and waited for, through the CLI.
func TestStartStatusStopWait(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "w1")
	code, out, errs := runCLI(t, "start", "w1", "--rundir", dir, "--", "sleep", "300")
	if code != exitOK || errs != "" {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	pid := holder(t, dir, "w1")
	if want := fmt.Sprintf("w1: started (pid %d)\n", pid); out != want {
		t.Errorf("start: %q; want %q", out, want)
	}
	// Starting it again is done already: exit 0, and the same process.
	code, out, _ = runCLI(t, "start", "w1", "--rundir", dir, "--", "sleep", "300")
	if want := fmt.Sprintf("w1: already running (pid %d)\n", pid); code != exitOK || out != want {
		t.Errorf("start again: exit %d, %q; want 0, %q", code, out, want)
	}
	code, out, _ = runCLI(t, "status", "--rundir", dir) // from the record
	if want := fmt.Sprintf("w1: running (pid %d)\n", pid); code != exitOK || out != want {
		t.Errorf("status: exit %d, %q; want 0, %q", code, out, want)
	}
	code, out, errs = runCLI(t, "stopwait", "w1", "--rundir", dir, "--timeout=60s")
	if want := fmt.Sprintf("w1: stopped (pid %d)\n", pid); code != exitOK || out != want || errs != "" {
		t.Errorf("stopwait: exit %d, %q, %q; want 0, %q", code, out, errs, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "w1.pid")); !os.IsNotExist(err) {
		t.Errorf("pidfile after stopwait: %v", err)
	}
	code, out, _ = runCLI(t, "status", "w1", "--rundir", dir)
	if code != exitStopped || out != "w1: stopped\n" {
		t.Errorf("status after stopwait: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "stop", "w1", "--rundir", dir)
	if code != exitOK || out != "w1: not running\n" {
		t.Errorf("stop after stopwait: exit %d, %q", code, out)
	}
}

// A node that cannot start is exit 1 and a FAILED line naming it.
func TestStartFails(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "w1")
	missing := filepath.Join(dir, "no-such-program")
	code, out, errs := runCLI(t, "start", "w1", "--rundir", dir, "--", missing)
	if code != exitFailed || !strings.HasPrefix(out, "w1: FAILED: ") || !strings.Contains(out, missing) || errs != "" {
		t.Errorf("start %s: exit %d, %q, %q; want 1 and a FAILED line", missing, code, out, errs)
	}
}
