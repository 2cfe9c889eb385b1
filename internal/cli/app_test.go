package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// runCLI runs multi with args (without the program name) and returns the
// exit code and what it printed. Tests that call Run do not run in
// parallel: urfave/cli writes into the flag definitions, which are
// package variables, while it parses a command line.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(append([]string{"multi"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// emptyDir fails the test if dir holds anything: a refused command
// changes nothing.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("%s: %v, %v; want it empty", dir, ents, err)
	}
}

func TestNoArgumentsShowHelp(t *testing.T) {
	code, out, errs := runCLI(t)
	if code != exitUsage || out != "" || !strings.Contains(errs, "USAGE:") || !strings.Contains(errs, "stopwait") {
		t.Errorf("multi: exit %d, stdout %q, stderr %q; want 2 and the help on stderr", code, out, errs)
	}
}

func TestVersion(t *testing.T) {
	code, out, errs := runCLI(t, "--version")
	if code != exitOK || !strings.HasPrefix(out, "multi version ") || !strings.Contains(out, "go1.") || errs != "" {
		t.Errorf("--version: exit %d, %q, %q", code, out, errs)
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errs := runCLI(t, "strat", "w1")
	if code != exitUsage || out != "" || errs != "multi: unknown command \"strat\" (see multi --help)\n" {
		t.Errorf("strat: exit %d, %q, %q", code, out, errs)
	}
}

// A usage error is exit 2 and two lines on stderr: what is wrong, naming
// the verb, then the verb's usage line; nothing is written.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"start"}, "multi start: no nodes given"},
		{[]string{"start", "w1", "--"}, "multi start: no command after --"},
		{[]string{"start", "w1", "--lock-timeout=0", "--", "true"}, `multi start: --lock-timeout wants a positive duration (10s, 1m30s) or seconds, not "0"`},
		{[]string{"stop", "w1", "--", "sleep", "1"}, "multi stop: a command after -- only goes with start, run, restart, show and get"},
		{[]string{"stop", "w1", "-HUP", "-TERM"}, "multi stop: two signals given (-HUP and -TERM)"},
		{[]string{"stop", "w1", "-NOSUCH"}, "multi stop: -NOSUCH is neither a flag nor a signal"},
		{[]string{"stopwait", "w1", "--timeout=soon"}, `multi stopwait: --timeout wants a positive duration (10s, 1m30s) or seconds, not "soon"`},
		{[]string{"stopwait", "w1", "--wait=spin"}, `multi stopwait: --wait is poll or notify, not "spin"`},
		{[]string{"kill", "w1", "-HUP"}, "multi kill: -HUP: this command takes no signal"},
		{[]string{"status", "w1", "-KILL"}, "multi status: -KILL: this command takes no signal"},
		{[]string{"status", "w1", "--rundir:1=/x"}, "multi status: --rundir cannot be given per node (--rundir:1=/x)"},
		{[]string{"status", "a/b"}, `multi status: bad node name: "a/b"`},
		{[]string{"status"}, "multi status: no nodes given, and none recorded in "},
		{[]string{"logs", "w1", "w2"}, "multi logs: give one node name"},
		{[]string{"names", "w1", "w1"}, "multi names: "},
		{[]string{"expand"}, "multi expand: no template given"},
		{[]string{"expand", "%y", "w1"}, "multi expand: "},
		{[]string{"get"}, "multi get: no node name given"},
		{[]string{"show", "w1", "-"}, "multi show: a lone '-' is neither a flag nor a node name"},
		{[]string{"completion", "fish"}, "multi completion: say bash or zsh"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		args := append([]string{tt.args[0], "--rundir=" + dir}, tt.args[1:]...)
		if tt.args[0] == "completion" {
			args = tt.args
		}
		code, out, errs := runCLI(t, args...)
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], tt.msg) ||
			!strings.HasPrefix(lines[1], "usage: multi "+tt.args[0]+" ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, %q and the usage line", tt.args, code, out, errs, tt.msg)
		}
		emptyDir(t, dir)
	}
}

// -h or --help anywhere before "--" prints the verb's help and succeeds.
func TestVerbHelp(t *testing.T) {
	code, out, errs := runCLI(t, "stopwait", "w1", "-h")
	if code != exitOK || !strings.Contains(out, "multi stopwait [flags] [NODES...] [-SIGNAL]") || !strings.Contains(out, "--timeout") || errs != "" {
		t.Errorf("stopwait -h: exit %d, %q, %q", code, out, errs)
	}
}
