package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
)

// forget removes the record of a stopped node, and refuses, removing
// nothing, while any node given still runs.
func TestForget(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "w1", "w2")
	if code, out, errs := runCLI(t, "start", "w1", "w2", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "stopwait", "w2", "--rundir", dir); code != exitOK {
		t.Fatalf("stopwait w2: exit %d, %q, %q", code, out, errs)
	}
	rec := func(name string) bool {
		_, err := os.Stat(record.Path(dir, name))
		return err == nil
	}
	pid := holder(t, dir, "w1")
	code, out, errs := runCLI(t, "forget", "w2", "w1", "--rundir", dir)
	if code != exitFailed || out != "w1: FAILED: running (pid "+strconv.Itoa(pid)+"): stop it first\n" ||
		errs != "multi forget: nothing forgotten\n" || !rec("w1") || !rec("w2") {
		t.Errorf("forget w2 w1 (w1 running): exit %d, %q, %q, records %v %v; want 1 and both kept", code, out, errs, rec("w1"), rec("w2"))
	}
	code, out, errs = runCLI(t, "forget", "w2", "--rundir", dir)
	if want := "w2: forgotten (" + filepath.Join(dir, "w2.node") + " removed)\n"; code != exitOK || out != want || errs != "" || rec("w2") {
		t.Errorf("forget w2: exit %d, %q, %q; want 0, %q", code, out, errs, want)
	}
	// status without names no longer lists it.
	code, out, _ = runCLI(t, "status", "--rundir", dir)
	if code != exitOK || strings.Contains(out, "w2") {
		t.Errorf("status after forget: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "forget", "w2", "--rundir", dir)
	if code != exitOK || !strings.HasPrefix(out, "w2: no record (") {
		t.Errorf("forget w2 again: exit %d, %q", code, out)
	}
}
