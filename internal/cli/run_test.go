package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// run refuses a bad command line with a usage error, starting nothing.
func TestRunUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rundir", dir, "--", "sleep", "1"}, "multi run: no nodes given"},
		{[]string{"run", "w1", "--rundir", dir, "--on-exit=always", "--", "sleep", "1"}, "multi run: --on-exit is stop-all, restart or ignore, not \"always\""},
		{[]string{"run", "w1", "--rundir", dir, "--backoff=soon", "--", "sleep", "1"}, "multi run: --backoff wants a positive duration"},
		{[]string{"run", "w1", "--rundir", dir, "-STOP", "--", "sleep", "1"}, "multi run: -STOP stops a node without ending it"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != exitUsage || out != "" || !strings.HasPrefix(errs, c.want) {
			t.Errorf("%q: exit %d, %q, %q; want %d, %q", c.args, code, out, errs, exitUsage, c.want)
		}
	}
	emptyDir(t, dir)
}

// A node that exits on its own ends the run with its exit status (the
// default --on-exit=stop-all), its output on run's stdout prefixed with
// its name. In a child process: run reaps every child of its process.
func TestRunExitStatus(t *testing.T) {
	if os.Getenv("MULTI_TEST_RUN_CLI") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunExitStatus$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "MULTI_TEST_RUN_CLI=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestRunExitStatus")) {
			t.Fatalf("in a child process: %v\n%s", err, out)
		}
		return
	}
	dir := t.TempDir()
	killLeftovers(t, dir, "w1", "w2")
	// w1 exits only once w2 has said hello (a file says so, polled with a
	// deadline), so that w2's line is written before stop-all ends it.
	code, out, errs := runCLI(t, "run", "w1", "w2", "--rundir", dir, "--",
		"sh", "-c", `echo hello from $0
if [ $0 = w1 ]; then
	i=0; while [ ! -e "$1" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done
	exit 3
fi
: > "$1"; exec sleep 60`, "%n", filepath.Join(dir, "w2.up"))
	if code != 3 {
		t.Errorf("exit %d; want 3\n%s", code, errs)
	}
	for _, want := range []string{"w1 | hello from w1\n", "w2 | hello from w2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout %q; want a line %q", out, want)
		}
	}
	if !strings.Contains(errs, "w2: stopped (pid ") {
		t.Errorf("stderr %q; want w2 stopped", errs)
	}
}
