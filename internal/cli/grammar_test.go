package cli

import (
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

func TestNames(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "names", "3", "--range-prefix=web", "--suffix=h", "--rundir", dir)
	if code != exitOK || out != "web1@h\nweb2@h\nweb3@h\n" || errs != "" {
		t.Errorf("names 3: exit %d, %q, %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "names", "w1", "--prefix=p-", `--suffix=""`, "--rundir", dir)
	if code != exitOK || out != "p-w1@\n" {
		t.Errorf("names --prefix: exit %d, %q", code, out)
	}
	emptyDir(t, dir)
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "expand", "/run/app/%n-%i.pid:%h", "w1", "w2", "--suffix=h", "--rundir", dir)
	if code != exitOK || out != "/run/app/w1-1.pid:w1@h\n/run/app/w2-2.pid:w2@h\n" || errs != "" {
		t.Errorf("expand: exit %d, %q, %q", code, out, errs)
	}
	emptyDir(t, dir)
}

func TestShow(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "show", "A", "B", "C", "-c:1", "4", "-c:2-3", "8", "--suffix=h", "--rundir", dir,
		"--", "worker", "--name=%h", "it's")
	want := "worker --name=A@h 'it'\\''s' -c 4\nworker --name=B@h 'it'\\''s' -c 8\nworker --name=C@h 'it'\\''s' -c 8\n"
	if code != exitOK || out != want || errs != "" {
		t.Errorf("show: exit %d, %q, %q; want %q", code, out, errs, want)
	}
	// --verbose adds the files.
	code, out, _ = runCLI(t, "show", "w1", "--verbose", "--rundir", dir, "--", "sleep", "1")
	if want := "w1: sleep 1  [pidfile " + filepath.Join(dir, "w1.pid") + ", logfile " + filepath.Join(dir, "w1.log") + "]\n"; code != exitOK || out != want {
		t.Errorf("show --verbose: exit %d, %q; want %q", code, out, want)
	}
	emptyDir(t, dir)
}

// show without a command uses the record; with neither, the node fails.
func TestShowFromRecord(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "show", "w1", "--rundir", dir)
	if code != exitFailed || out != "" || errs != "w1: FAILED: no command (give one after --)\n" {
		t.Errorf("show without command or record: exit %d, %q, %q", code, out, errs)
	}
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if err := record.Write(dir, ns[0]); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "show", "w1", "--rundir", dir)
	if code != exitOK || out != "sleep 300\n" || errs != "" {
		t.Errorf("show from record: exit %d, %q, %q", code, out, errs)
	}
}

func TestGet(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "get", "w2@h", "w1", "w2", "w3", "--suffix=h", "--rundir", dir, "--", "worker", "%n")
	if code != exitOK || out != "worker w2\n" || errs != "" {
		t.Errorf("get w2@h: exit %d, %q, %q", code, out, errs)
	}
	// get wants the full name; a node not in the set is exit 1.
	for _, name := range []string{"w2", "w9@h"} {
		code, out, errs = runCLI(t, "get", name, "w1", "w2", "--suffix=h", "--rundir", dir, "--", "worker")
		if code != exitFailed || out != "" || errs != "multi get: no node "+name+" in the set\n" {
			t.Errorf("get %s: exit %d, %q, %q", name, code, out, errs)
		}
	}
	emptyDir(t, dir)
}
