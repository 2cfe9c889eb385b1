//go:build linux

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"golang.org/x/sys/unix"
)

// asNobody is the prefix of a command that runs as the other user, the
// node's service user, as a de-privileged node runs (setpriv, celery's
// --uid).
var asNobody = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}

// needSetpriv skips the test unless it runs as root with setpriv(1).
func needSetpriv(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is on root, by another user (uid 65534)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv(1) from util-linux, to run a node as another user")
	}
}

// A record proves it was written by multi only by where it lives: in a
// rundir that nobody but root (or the user running multi) can write to.
// Given a rundir of the node's service user, or root's but writable by
// that user's group, every verb refuses it, naming the folder, its owner
// and its mode, and starts nothing. Accepted with --allow-shared-folders,
// the forged-record attack is played out with both vectors: a node
// de-privileged to that user writes a record's JSON through the
// descriptors root handed it (its pidfile and its logfile), and the user
// renames both files to records' names; root's restart and status must
// not run the forged command, which would write its uid to a marker.
func TestForgedRecordNotTrusted(t *testing.T) {
	needSetpriv(t)
	t.Parallel()
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755) // the user must reach their folder
	os.Chmod(base, 0o755)
	out := filepath.Join(base, "out")
	mustOK(t, os.Mkdir(out, 0o755))
	marker := filepath.Join(out, "ran-as")

	// Refused: a rundir of the service user's, and one of root's that
	// the user's group can write to.
	for _, c := range []struct {
		name     string
		uid, gid int
		mode     os.FileMode
		want     string
	}{
		{"users", nobody, nobody, 0o755, "owner uid 65534, mode 755"},
		{"group-writable", 0, nobody, 0o775, "owner uid 0, mode 775"},
	} {
		rundir := filepath.Join(base, c.name)
		mustOK(t, os.Mkdir(rundir, 0o700))
		mustOK(t, os.Chown(rundir, c.uid, c.gid))
		mustOK(t, os.Chmod(rundir, c.mode))
		defer killHolder(t, filepath.Join(rundir, "w1.pid"))
		want := "folder " + rundir + " (" + c.want + ") can be written by others than root and this user (uid 0); refusing it"
		code, stdout, stderr := runMulti(t, rundir, nil, "start", "w1", "--", "sleep", "300")
		if code == 0 || !strings.Contains(stdout+stderr, want) {
			t.Errorf("start in a %s rundir: exit %d, %q; want it refused: %q", c.name, code, stdout+stderr, want)
		}
		for _, verb := range []string{"status", "restart", "stopwait"} {
			code, stdout, stderr := runMulti(t, rundir, nil, verb)
			if code == 0 || !strings.Contains(stdout+stderr, want) {
				t.Errorf("%s in a %s rundir: exit %d, %q; want it refused: %q", verb, c.name, code, stdout+stderr, want)
			}
		}
		if entries, _ := os.ReadDir(rundir); len(entries) != 0 {
			t.Errorf("%s rundir: %d files made in it; want none", c.name, len(entries))
		}
	}

	// Accepted: the attack, both vectors.
	theirs := filepath.Join(base, "theirs")
	mustOK(t, os.Mkdir(theirs, 0o755))
	mustOK(t, os.Chown(theirs, nobody, nobody))
	record.AcceptShared(theirs, nil) // for killHolder, in this process
	forged := func(name string) string {
		return `{"name":"` + name + `","command":["sh","-c","id -u > ` + marker + `"],` +
			`"pidfile":"` + filepath.Join(out, name+".pid") + `","logfile":"` + filepath.Join(out, name+".log") + `"}`
	}
	// %% is a literal % in a command template; the write to the pidfile
	// in a subshell, whose closing of its copy leaves the node's lock be.
	script := `(printf '%%s' '` + forged("evil") + `' >&"$MULTI_PIDFILE_FD") && printf '%%s' '` + forged("evil2") + `' && exec sleep 300`
	start := append(append([]string{"start", "w1", "--allow-shared-folders", "--"}, asNobody...), "bash", "-c", script) // dash takes one-digit descriptors only
	pidPath, logPath := filepath.Join(theirs, "w1.pid"), filepath.Join(theirs, "w1.log")
	defer killHolder(t, pidPath)
	defer killHolder(t, filepath.Join(theirs, "evil.node"))
	code, stdout, _ := runMulti(t, theirs, nil, start...)
	if code != 0 {
		t.Fatalf("start with --allow-shared-folders: exit %d, %q", code, stdout)
	}
	killAtEnd(t, stdout) // its pidfile is renamed, and may be rewritten if the records are read
	pollUntil(t, "the node to write both records", func() bool {
		p, _ := os.ReadFile(pidPath)
		l, _ := os.ReadFile(logPath)
		return bytes.HasPrefix(p, []byte(`{"name":"evil"`)) && string(l) == forged("evil2")
	})
	for from, to := range map[string]string{pidPath: "evil.node", logPath: "evil2.node"} {
		mv := exec.Command(asNobody[0], append(asNobody[1:], "mv", from, filepath.Join(theirs, to))...)
		if b, err := mv.CombinedOutput(); err != nil {
			t.Fatalf("the user's rename of %s: %v %s", from, err, b)
		}
	}
	for _, args := range [][]string{
		{"restart", "--allow-shared-folders"},
		{"restart", "evil", "evil2", "--allow-shared-folders"},
		{"start", "evil", "evil2", "--allow-shared-folders"},
		{"status", "--allow-shared-folders"},
	} {
		code, stdout, stderr := runMulti(t, theirs, nil, args...)
		if code == 0 {
			t.Errorf("multi %s: exit 0, %q; want the records not read", strings.Join(args, " "), stdout+stderr)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the forged record's command ran, as uid %s", bytes.TrimSpace(b))
	}
	for _, name := range []string{"evil", "evil2"} {
		if _, err := os.Stat(filepath.Join(out, name+".pid")); err == nil {
			t.Errorf("a pidfile was made where the forged record %s says", name)
		}
	}
}

// A node's working folder is reached by the same walk as a pidfile's, and
// its command started in the folder that walk reached:
// the user who owns the folder around it, having swapped it for a link to
// a folder of theirs, does not get their ./run.sh run as root by restart.
// The node is left running, and restart says why.
func TestRestartWorkFolderSwapped(t *testing.T) {
	needSetpriv(t)
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	rundir := filepath.Join(base, "run")
	theirs := filepath.Join(base, "theirs")
	mustOK(t, os.Mkdir(theirs, 0o755))
	mustOK(t, os.Chown(theirs, nobody, nobody))
	app, evil := filepath.Join(theirs, "app"), filepath.Join(theirs, "evil")
	mustOK(t, os.Mkdir(app, 0o755))
	mustOK(t, os.WriteFile(filepath.Join(app, "run.sh"), []byte("#!/bin/sh\nexec sleep 300\n"), 0o755))
	marker := filepath.Join(base, "ran-as")
	mustOK(t, os.Mkdir(evil, 0o755))
	mustOK(t, os.WriteFile(filepath.Join(evil, "run.sh"), []byte("#!/bin/sh\nid -u > "+marker+"\nexec sleep 300\n"), 0o755))
	mustOK(t, os.Chown(evil, nobody, nobody))
	pidPath := filepath.Join(rundir, "w1.pid")
	defer killHolder(t, pidPath)

	cmd := exec.Command(binary(t), "start", "w1", "--", "./run.sh")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	b, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`w1: started \(pid ([0-9]+)\)`).FindSubmatch(b)
	if err != nil || m == nil {
		t.Fatalf("start in %s: %v, %q", app, err, b)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	killAtEnd(t, string(b))

	// The user swaps the folder for a link to theirs.
	mustOK(t, os.Rename(app, app+".old"))
	mustOK(t, os.Symlink(evil, app))
	mustOK(t, os.Lchown(app, nobody, nobody))

	code, stdout, stderr := runMulti(t, rundir, nil, "restart", "w1")
	want := "working folder " + app + ": folder " + app + " is a symbolic link owned by uid 65534, who could point it anywhere; not followed"
	if code != 1 || !strings.Contains(stdout, want) {
		t.Errorf("restart: exit %d, %q %q; want 1 and %q", code, stdout, stderr, want)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the user's ./run.sh ran, as uid %s", bytes.TrimSpace(b))
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if gone(pid) {
		t.Errorf("the node (pid %d) was stopped; want it left running", pid)
	}

	// Stopped, and started again from its record: start itself reaches
	// the folder by the walk, and changes to the folder it reached.
	if code, _, _ := runMulti(t, rundir, nil, "stopwait", "w1"); code != 0 {
		t.Fatalf("stopwait: exit %d", code)
	}
	code, stdout, _ = runMulti(t, rundir, nil, "start", "w1")
	if code != 1 || !strings.Contains(stdout, "w1: FAILED: "+want) {
		t.Errorf("start from the record: exit %d, %q; want 1 and %q", code, stdout, want)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the user's ./run.sh ran, as uid %s", bytes.TrimSpace(b))
	}
}

// killAtEnd pins the node that a start's output names ("w1: started (pid
// N)") with a pidfd, and SIGKILLs it through that pidfd when the test
// ends, whatever became of its pidfile.
func killAtEnd(t *testing.T, out string) {
	t.Helper()
	m := regexp.MustCompile(`started \(pid ([0-9]+)\)`).FindStringSubmatch(out)
	if m == nil {
		return
	}
	pid, _ := strconv.Atoi(m[1])
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of the node (pid %d): %v", pid, err)
	}
	t.Cleanup(func() {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
}
