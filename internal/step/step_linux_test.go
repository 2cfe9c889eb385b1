package step

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// notBeforeExec are packages of multi's program that a node's exec step
// must never initialise: the step runs from this package's init, which
// Go reaches before theirs only while this package imports none of them.
var notBeforeExec = []string{
	"regexp",
	"net/netip",
	"text/template",
	"github.com/urfave/cli/v2",
	"github.com/russross/blackfriday/v2",
	"github.com/multi-launcher/multi/nodes",
	"github.com/multi-launcher/multi/internal/launch",
	"github.com/multi-launcher/multi/internal/cli",
}

// The multi program, run as a node's exec step, execs the node's command
// before any package it does not need is initialised: GODEBUG=inittrace=1
// lists each package's init as it runs, and none of notBeforeExec is
// among them. It still does its work: the command ran, with the
// pidfile locked and its output in the logfile.
func TestStepRunsBeforeOtherPackagesInit(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build multi with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "multi")
	build := exec.Command(gobin, "build", "-o", bin, "github.com/multi-launcher/multi")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pid, log := filepath.Join(dir, "w1.pid"), filepath.Join(dir, "w1.log")
	cmd := exec.Command(bin, pid, log, "--", "/bin/sh", "-c", `echo "$MULTI_PIDFILE holds $(cat "$MULTI_PIDFILE"), I am $$"`)
	cmd.Env = append(os.Environ(), Env+"="+Lock, "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil || len(report) > 0 {
		t.Fatalf("step: %v, report %q, stderr:\n%s", err, report, trace.String())
	}
	inits := map[string]bool{}
	for _, line := range strings.Split(trace.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			inits[f[1]] = true
		}
	}
	if !inits["os"] {
		t.Fatalf("no inittrace from the step (GODEBUG=inittrace=1):\n%s", trace.String())
	}
	for _, p := range notBeforeExec {
		if inits[p] {
			t.Errorf("the exec step initialised %s before its exec", p)
		}
	}
	out, err := os.ReadFile(log)
	want := fmt.Sprintf("%s holds %d, I am %d", pid, cmd.Process.Pid, cmd.Process.Pid)
	if err != nil || !strings.Contains(string(out), want) {
		t.Errorf("logfile: %q, %v; want %q (the command ran, its output there)", out, err, want)
	}
}
