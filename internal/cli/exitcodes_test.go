package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// Every verb's exit codes, as the README's table and the manual page's
// EXIT STATUS give them: 0 as asked, 1 a node failed, 2 usage error;
// status 0 running, 1 stale, 3 stopped, 4 unknown; an unknown node 4
// for every verb.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "up", "bad", "bad2")
	if code, out, errs := runCLI(t, "start", "up", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start up: exit %d, %q, %q", code, out, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "dead.pid"), []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// down1: recorded, stopped, of another project (folder).
	down1 := nodes.Node{Name: "down1", Command: []string{"true"}, Dir: "/elsewhere", PidFile: filepath.Join(dir, "down1.pid"), LogFile: filepath.Join(dir, "down1.log")}
	if err := record.Write(dir, down1); err != nil {
		t.Fatal(err)
	}
	notFile := filepath.Join(dir, "folder")
	if err := os.Mkdir(notFile, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-program")
	tests := []struct {
		want int
		args string // split at spaces; DIR, MISSING and FOLDER stand for paths
	}{
		{0, "start up -- sleep 300"}, // already running counts as started
		{1, "start bad -- MISSING"},
		{0, "start"},            // the recorded nodes of this project: up runs already
		{2, "start -- sleep 1"}, // without names, no command for every node
		{2, "start nocmd"},
		{0, "stop down1"}, // not running counts as stopped
		{4, "stop none1"}, // no record, no pidfile: unknown node, as for status
		{1, "stop w1 --pidfile=FOLDER"},
		{2, "stop w1 --bogus"},
		{0, "stopwait down1"},
		{4, "stopwait none1"},
		{1, "stopwait w1 --pidfile=FOLDER"},
		{2, "stopwait ig --tiemout=2"},
		{0, "kill down1"},
		{4, "kill none1"},
		{1, "kill w1 --pidfile=FOLDER"},
		{2, "kill w1 -HUP"},
		{1, "restart bad2 -- MISSING"},
		{2, "restart nocmd"},
		{0, "status up"},
		{1, "status dead"},
		{3, "status up down1"},
		{4, "status up none1"}, // no record, no pidfile: unknown node
		{4, "status w1 --pidfile=FOLDER"},
		{2, "status --jsno"},
		{0, "logs up"},
		{1, "logs none1"},
		{2, "logs -n x"},
		{0, "forget none1"},
		{1, "forget up"},
		{0, "forget"}, // this project's stopped nodes: none; up kept
		{0, "names w1"},
		{2, "names w1 w1"},
		{0, "expand %n w1"},
		{2, "expand"},
		{0, "show w1 -- true"},
		{1, "show none1"},
		{2, "show -"},
		{0, "get w1@h w1 --suffix=h -- true"},
		{1, "get zz@h w1 --suffix=h -- true"},
		{2, "get"},
		{0, "completion bash"},
		{2, "completion fish"},
		{0, "man"},
		{2, "strat w1"},
	}
	for _, tt := range tests {
		args := strings.Fields(strings.NewReplacer("MISSING", missing, "FOLDER", notFile).Replace(tt.args))
		if args[0] != "completion" && args[0] != "man" && args[0] != "strat" {
			args = append([]string{args[0], "--rundir=" + dir}, args[1:]...)
		}
		if code, out, errs := runCLI(t, args...); code != tt.want {
			t.Errorf("multi %s: exit %d; want %d\nstdout %q\nstderr %q", tt.args, code, tt.want, out, errs)
		}
	}
	// restart of a running node: 0, and it runs again.
	if code, out, errs := runCLI(t, "restart", "up", "--rundir", dir, "--timeout=30s"); code != exitOK || !strings.HasPrefix(out, "up: restarted") {
		t.Errorf("restart up: exit %d, %q, %q", code, out, errs)
	}
}
