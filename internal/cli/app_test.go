package cli

import (
	"bytes"
	"os"
	"runtime/debug"
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

// --version names the commit and whether the tree was modified, from the
// build info or, where the go command recorded none, from make's -X flags.
func TestVersionOf(t *testing.T) {
	t.Parallel()
	vcs := func(rev, mod string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: mod}}}
	}
	bare := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	tests := []struct {
		bi       *debug.BuildInfo
		rev, mod string
		want     string
	}{
		{vcs("7cbeac52139a59e7f3ac0da786fd0c5754422f70", "false"), "", "", "(devel) (commit 7cbeac52139a) go1.26.8"},
		{vcs("7cbeac52139a59e7f3ac0da786fd0c5754422f70", "true"), "", "", "(devel) (commit 7cbeac52139a, modified) go1.26.8"},
		{bare, "0123456789abcdef", "true", "(devel) (commit 0123456789ab, modified) go1.26.8"},
		{bare, "", "", "(devel) (commit unknown: built without VCS information) go1.26.8"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.bi, tt.rev, tt.mod); got != tt.want {
			t.Errorf("versionOf(%v, %q, %q) = %q; want %q", tt.bi.Settings, tt.rev, tt.mod, got, tt.want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errs := runCLI(t, "strat", "w1")
	if code != exitUsage || out != "" || errs != "multi: unknown command \"strat\"; did you mean start? (see multi --help)\n" {
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
		// Names but no command, and no record to take one from.
		{[]string{"start", "w1"}, "multi start: w1: no command: give one after -- (no record "},
		{[]string{"restart", "w1"}, "multi restart: w1: no command: give one after -- (no record "},
		{[]string{"start", "w1", "--lock-timeout=0", "--", "true"}, `multi start: --lock-timeout wants a positive duration (10s, 1m30s) or seconds, not "0"`},
		{[]string{"stop", "w1", "--", "sleep", "1"}, "multi stop: a command after -- only goes with start, run, restart, show and get"},
		{[]string{"stop", "w1", "-HUP", "-TERM"}, "multi stop: two signals given (-HUP and -TERM)"},
		{[]string{"stop", "w1", "-NOSUCH"}, "multi stop: -NOSUCH is neither a flag nor a signal"},
		{[]string{"stopwait", "w1", "--timeout=soon"}, `multi stopwait: --timeout wants a positive duration (10s, 1m30s) or seconds, not "soon"`},
		{[]string{"stopwait", "w1", "--wait=spin"}, `multi stopwait: --wait is poll or notify, not "spin"`},
		// A limit that is none is refused, naming its flag, before anything.
		{[]string{"start", "w1", "--limit-nofile=abc", "--", "true"}, `multi start: --limit-nofile: bad limit: want N or SOFT:HARD (numbers, or infinity), not "abc"`},
		{[]string{"start", "w1", "--limit-nproc=-1", "--", "true"}, `multi start: --limit-nproc: bad limit: want N or SOFT:HARD (numbers, or infinity), not "-1"`},
		{[]string{"restart", "w1", "--limit-nofile=128:64"}, `multi restart: --limit-nofile: bad limit: soft limit 128 above the hard limit 64 in "128:64"`},
		{[]string{"run", "w1", "--limit-as=lots", "--", "true"}, `multi run: --limit-as: bad limit: want BYTES or SOFT:HARD`},
		{[]string{"apply", "w1", "--memory-max=-1", "--", "true"}, `multi apply: --memory-max: bad limit: want bytes (with K, M, G or T: 512M) or max, not "-1"`},
		{[]string{"start", "w1", "--cpu-max=0%", "--", "true"}, `multi start: --cpu-max: bad limit: want a share of one CPU`},
		{[]string{"start", "w1", "--pids-max=0", "--", "true"}, `multi start: --pids-max: bad limit: want a count of tasks from 1, or max, not "0"`},
		{[]string{"kill", "w1", "-HUP"}, "multi kill: -HUP: this command takes no signal"},
		{[]string{"status", "w1", "-KILL"}, "multi status: -KILL: this command takes no signal"},
		{[]string{"status", "w1", "--rundir:1=/x"}, "multi status: --rundir cannot be given per node (--rundir:1=/x)"},
		{[]string{"status", "a/b"}, `multi status: bad node name: "a/b"`},
		{[]string{"status"}, "multi status: no nodes given, and none recorded in "},
		{[]string{"logs", "w1", "-n", "x"}, `multi logs: --lines is a number of lines (0 or more) or all, not "x"`},
		{[]string{"names", "w1", "w1"}, "multi names: "},
		{[]string{"expand"}, "multi expand: no template given"},
		// A verb that runs no command refuses what it cannot use, and
		// names the flag the user most likely meant.
		{[]string{"stopwait", "ig", "--tiemout=2"}, "multi stopwait: unknown flag --tiemout=2 (did you mean --timeout?)"},
		{[]string{"stopwait", "ig", "--timeuot", "2"}, "multi stopwait: unknown flag --timeuot (did you mean --timeout?)"},
		{[]string{"status", "--jsno"}, "multi status: unknown flag --jsno (did you mean --json?)"},
		{[]string{"status", "w1", "-json"}, "multi status: unknown flag -json (did you mean --json?)"},
		{[]string{"kill", "w1", "--grop"}, "multi kill: unknown flag --grop (did you mean --group?)"},
		{[]string{"logs", "w1", "-F"}, "multi logs: unknown flag -F (did you mean -f?)"},
		{[]string{"stop", "w1", "-c", "3"}, "multi stop: unknown flag -c (options for the nodes' command only go with start, restart, show and get)"},
		{[]string{"stop", "w1", "--loglevel=DEBUG"}, "multi stop: unknown flag --loglevel=DEBUG (options for the nodes' command only go with start, restart, show and get)"},
		{[]string{"names", "w1", "-c:1", "3"}, "multi names: unknown flag -c:1 (options"},
		{[]string{"expand", "%n", "w1", "--rundri=/x"}, "multi expand: unknown flag --rundri=/x (did you mean --rundir?)"},
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
