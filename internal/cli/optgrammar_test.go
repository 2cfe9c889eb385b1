package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// The verbs that pass options on to the nodes' command.
var forwardVerbs = []string{"start", "restart", "run", "show", "get"}

// parsesForNode runs verb on node w1 (get: w1@h) in an empty rundir,
// without a command or record, with opts: a command line multi's grammar
// accepts gets as far as "no command", and nothing starts.
func parsesForNode(t *testing.T, verb string, opts ...string) (code int, stderr string) {
	t.Helper()
	dir := t.TempDir()
	args := []string{verb}
	if verb == "get" {
		args = append(args, "w1@h")
	}
	args = append(append(args, "w1", "--suffix=h", "--rundir", dir), opts...)
	code, _, stderr = runCLI(t, args...)
	emptyDir(t, dir)
	return code, stderr
}

// Celery's option grammar is the same for every verb that passes options
// on: its one-capital options (-Q, -E, -B, -O, -P, -S) are options, never
// a mistyped -SIGNAL, for restart and run as for start and show.
func TestCeleryCapitalOptionsEveryVerb(t *testing.T) {
	for _, verb := range forwardVerbs {
		for _, opts := range [][]string{{"-E"}, {"-Q", "data"}, {"-B"}, {"-O", "fair"}, {"-P", "solo"}, {"-S", "/tmp/state"}, {"-E", "-Q:1", "data"}} {
			code, errs := parsesForNode(t, verb, opts...)
			if !strings.Contains(errs, "no command") || strings.Contains(errs, "neither a flag nor a signal") {
				t.Errorf("%s w1 %s: exit %d, %q; want it parsed (then: no command)", verb, strings.Join(opts, " "), code, errs)
			}
		}
	}
	// A mistyped -SIGNAL of more than one letter is still refused.
	for _, verb := range []string{"restart", "run"} {
		if code, errs := parsesForNode(t, verb, "-TREM"); code != exitUsage || !strings.Contains(errs, "-TREM is neither a flag nor a signal") {
			t.Errorf("%s w1 -TREM: exit %d, %q; want a usage error", verb, code, errs)
		}
	}
}

// Before --, a flag of another verb, or an option near one of multi's
// flags, is a usage error that says what was meant and how to pass it to
// the command instead; celery's own options pass.
func TestMisspeltFlagRefused(t *testing.T) {
	tests := []struct {
		verb string
		opt  string
		want string
	}{
		{"restart", "--roling", "unknown flag --roling (did you mean --rolling?)"},
		{"restart", "--timout=5", "unknown flag --timout=5 (did you mean --timeout?)"},
		{"start", "--timeout=5", "--timeout is a flag of stopwait, restart, apply, scale and run, not of this command"},
		{"start", "--rolling", "--rolling is a flag of restart, not of this command"},
		{"run", "--on-exti=restart", "did you mean --on-exit?"},
		{"start", "--slef-lock", "did you mean --self-lock?"},
		{"start", "--evn=A=1", "did you mean --env?"},
		{"show", "--pidfiel=/x", "did you mean --pidfile?"},
		{"get", "--rundr=/x", "did you mean --rundir?"},
		{"start", "-timeout=5", "--timeout is a flag of stopwait, restart, apply, scale and run"},
		{"start", "--Rolling", "--rolling is a flag of restart"},
		{"start", "--version", "--version is a flag of multi"},
		{"restart", "--roling:w1", "did you mean --rolling?"},
	}
	for _, tt := range tests {
		code, errs := parsesForNode(t, tt.verb, tt.opt)
		first, _, _ := strings.Cut(errs, "\n")
		if code != exitUsage || !strings.Contains(first, tt.want) || !strings.Contains(first, "write it after -- with the command") {
			t.Errorf("%s w1 %s: exit %d, %q; want 2 and %q, and how to pass it after --", tt.verb, tt.opt, code, errs, tt.want)
		}
	}
	// Every long option of celery's worker, beat and global ones, and
	// its short ones, passes on every verb that passes options on.
	var celery []string
	for name := range celeryOptions {
		if name == "quiet" || name == "no-color" {
			celery = append(celery, "--"+name) // multi's own, and celery's: no value
			continue
		}
		celery = append(celery, "--"+name+"=1")
	}
	celery = append(celery, "-c", "3", "-n", "w1@%h", "-l", "INFO", "-f", "/tmp/x.log", "-A", "proj", "-D", "-s", "/tmp/s", "-Ofair", "-linfo", "-b", "redis://")
	for _, verb := range forwardVerbs {
		if code, errs := parsesForNode(t, verb, celery...); !strings.Contains(errs, "no command") {
			t.Errorf("%s w1 with celery's options: exit %d, %q; want them passed (then: no command)", verb, code, errs)
		}
	}
}

// restart --roling restarts nothing and records nothing.
func TestRestartMisspeltChangesNothing(t *testing.T) {
	dir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if err := record.Write(dir, ns[0]); err != nil {
		t.Fatal(err)
	}
	// Were the option passed on, w1 would start (and fail on it): killed.
	t.Cleanup(func() { runCLI(t, "kill", "w1", "--rundir", dir) })
	recordFile := record.Path(dir, "w1")
	before, err := os.ReadFile(recordFile)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "restart", "--roling", "--rundir", dir)
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, "multi restart: unknown flag --roling (did you mean --rolling?)") {
		t.Errorf("restart --roling: exit %d, %q, %q; want 2 and did you mean --rolling", code, out, errs)
	}
	after, err := os.ReadFile(recordFile)
	if err != nil || string(after) != string(before) {
		t.Errorf("record after restart --roling: %q, %v; want it unchanged: %q", after, err, before)
	}
	if _, err := os.Stat(filepath.Join(dir, "w1.pid")); !os.IsNotExist(err) {
		t.Errorf("w1.pid after restart --roling: %v; want none (nothing started)", err)
	}
}
