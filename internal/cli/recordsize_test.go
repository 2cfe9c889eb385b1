package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
)

// A record too large to read back is refused when written (exit 2, nothing
// started or written); one there already (planted, or written by an older
// multi) is skipped with a warning naming it by every verb without names,
// and forget removes it.
func TestRecordTooLarge(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "w1", "w2", "w3")
	args := []string{"start", "w1", "w2", "--rundir", dir}
	for i := 0; i < 10; i++ {
		args = append(args, "--env", "K"+string(rune('0'+i))+"="+strings.Repeat("x", 120<<10))
	}
	code, out, errs := runCLI(t, append(args, "--", "sleep", "300")...)
	ents, _ := os.ReadDir(dir)
	if code != exitUsage || !strings.Contains(errs, "w1: record too large: "+record.Path(dir, "w1")) || len(ents) != 0 {
		t.Fatalf("start with 1.2 MB of --env: exit %d, %q, %.300q, rundir holds %v; want 2, the node and its record named, nothing written",
			code, out, errs, ents)
	}
	if code, out, errs := runCLI(t, "start", "w1", "w2", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	w3 := record.Path(dir, "w3")
	big := `{"name":"w3","command":["sleep","1"],"pidfile":"/r/w3.pid","logfile":"/r/w3.log","env":["K=` + strings.Repeat("x", 2<<20) + `"]}`
	if err := os.WriteFile(w3, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	warning := w3 + ": larger than 1048576 bytes; skipped"
	code, out, errs = runCLI(t, "status", "--rundir", dir)
	if code != exitOK || !strings.Contains(out, "w1") || !strings.Contains(out, "w2") || !strings.Contains(errs, warning) {
		t.Errorf("status: exit %d, %q, %q; want 0, w1 and w2 running, a warning %q", code, out, errs, warning)
	}
	code, out, errs = runCLI(t, "forget", "w3", "--rundir", dir)
	if code != exitOK || !strings.Contains(out, "w3: forgotten") {
		t.Errorf("forget w3: exit %d, %q, %q; want 0, forgotten", code, out, errs)
	}
	if _, err := os.Lstat(w3); !os.IsNotExist(err) {
		t.Errorf("forget w3 left %s: %v", filepath.Base(w3), err)
	}
	code, out, errs = runCLI(t, "stopwait", "--rundir", dir)
	if code != exitOK || strings.Count(out, "stopped") != 2 {
		t.Errorf("stopwait: exit %d, %q, %q; want w1 and w2 stopped", code, out, errs)
	}
}
