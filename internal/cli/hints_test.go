package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// start without a command, as celery multi users write it, says what
// the command would look like.
func TestNoCommandCeleryHint(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "start", "3", "-c", "3", "--rundir", dir)
	first, _, _ := strings.Cut(errs, "\n")
	if code != exitUsage || out != "" || !strings.HasSuffix(first, "; for a celery worker: multi start 3 -c 3 --rundir "+dir+" -- celery -A proj worker -n %h") {
		t.Errorf("start 3 -c 3: exit %d, %q, %q; want 2 and the line with a celery worker after --", code, out, errs)
	}
	emptyDir(t, dir)
}

// A command after -- that is a celery setting (KEY=VALUE) and no program
// is a usage error saying what -- means here; a program of such a name
// that exists is run.
func TestSettingAfterDashDash(t *testing.T) {
	dir := t.TempDir()
	for _, verb := range []string{"start", "restart", "run", "show"} {
		code, out, errs := runCLI(t, verb, "foo", "bar", "baz", "--rundir", dir, "--", "broker.transport.heartbeat=5")
		first, _, _ := strings.Cut(errs, "\n")
		want := "multi " + verb + ": broker.transport.heartbeat=5 is not a program on PATH (a setting, not a command): multi's -- is followed by the command to run"
		if code != exitUsage || out != "" || !strings.HasPrefix(first, want) || !strings.Contains(first, "(-- celery -A proj worker -n %h -- broker.transport.heartbeat=5)") {
			t.Errorf("%s foo bar baz -- broker.transport.heartbeat=5: exit %d, %q, %q; want 2 and %q", verb, code, out, errs, want)
		}
	}
	emptyDir(t, dir)
	// One that exists, on PATH, is a command like any other.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "a=b"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if code, out, errs := runCLI(t, "show", "w1", "--rundir", dir, "--", "a=b", "x"); code != exitOK || out != "a=b x\n" || errs != "" {
		t.Errorf("show w1 -- a=b x, with a=b on PATH: exit %d, %q, %q; want it shown", code, out, errs)
	}
	// So is one given by its path, or with a PATH of the nodes' own.
	if code, out, errs := runCLI(t, "show", "w1", "--rundir", dir, "--", "./k=v"); code != exitOK || out != "./k=v\n" {
		t.Errorf("show w1 -- ./k=v: exit %d, %q, %q; want it shown", code, out, errs)
	}
	run := t.TempDir()
	t.Cleanup(func() { runCLI(t, "kill", "w1", "--rundir", run) })
	if code, out, errs := runCLI(t, "start", "w1", "--rundir", run, "--env=PATH=/nonexistent", "--", "k=v"); code == exitUsage || !strings.Contains(out, "w1: FAILED") {
		t.Errorf("start w1 --env=PATH=/nonexistent -- k=v: exit %d, %q, %q; want it tried (and FAILED, not found)", code, out, errs)
	}
	emptyDir(t, dir)
}
