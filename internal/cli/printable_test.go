package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Text from files and processes (an error, a path, a warning) reaches
// the terminal escaped: no escape sequence, bidi override or forged line.
func TestResultEscapesUntrustedText(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", PidFile: "/r/\u202egnp.pid", LogFile: "/r/\x1b[2Jw1.log", Command: []string{"app", "\x1b[2J"}}
	bad := multi.Result{Node: n, Err: &multi.NodeError{Node: "w1", Op: "start", Err: errors.New("exited: \"\x1b]0;owned\x07\" | \u202eok")}, PID: 42, KilledAfter: time.Second, RecordErr: errors.New("could not record: \x1b[31m41")}
	var out, errs bytes.Buffer
	o := &output{w: &out, errw: &errs, verbose: true}
	o.result(bad)
	o.result(multi.Result{Node: n, Outcome: multi.Stopped, PID: 42, FilePID: -1})
	for _, s := range []string{out.String(), errs.String()} {
		if strings.ContainsAny(s, "\x1b\x07\u202e") || strings.Count(s, "\n") != strings.Count(s, "w1: ") {
			t.Errorf("printed raw: %q", s)
		}
	}
	if !strings.Contains(out.String(), `FAILED: exited: "\x1b]0;owned\x07" | \u202eok`) {
		t.Errorf("the error not shown escaped: %q", out.String())
	}
}

// A stale pidfile's path is escaped in status's line.
func TestStatusEscapesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x\u202ey")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w1.pid"), []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	code := Run([]string{"multi", "status", "w1", "--rundir", dir}, &out, &errs)
	if code != exitFailed || strings.Contains(out.String(), "\u202e") || !strings.Contains(out.String(), `x\u202ey`) {
		t.Errorf("status: exit %d, %q, %q; want 1 and the path escaped", code, out.String(), errs.String())
	}
}
