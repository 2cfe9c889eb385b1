//go:build unix

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runMulti runs multi with args and the rundir, and returns its exit
// status and stdout.
func runMulti(t *testing.T, rundir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("multi %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// Root, given a folder that another user owns, writes, truncates,
// creates, chmods and removes nothing outside it, whatever links that user
// planted there: the logfile a link to a root file or a dangling link, a
// folder in the logfile's or pidfile's template or the rundir a link to a
// folder of root's. Every verb that would touch the file refuses, naming
// the file and the link.
func TestRootFollowsNoPlantedLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is on root, by another user (uid 65534)")
	}
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("root's secret\n"), 0o600)
	os.WriteFile(filepath.Join(outside, "node.pid"), []byte("root's pidfile text\n"), 0o600)

	cases := []struct {
		name string
		// link: the planted link's path under the user's folder, and target
		link, target string
		args         []string
		want         string // on the node's line, after "w1: FAILED: "
	}{
		// The folder accepted, so that the link in it is looked at.
		{"logfile-to-root-file", "w1.log", secret,
			[]string{"--logfile=THEIRS/%n.log", "--allow-shared-folders"}, `logfile THEIRS/w1.log: is a symbolic link \(not followed\)`},
		{"logfile-dangling", "w1.log", filepath.Join(outside, "created.log"),
			[]string{"--logfile=THEIRS/%n.log", "--allow-shared-folders"}, `logfile THEIRS/w1.log: is a symbolic link \(not followed\)`},
		{"logfile-folder", "w1", outside,
			[]string{"--logfile=THEIRS/%n/secret"}, `logfile THEIRS/w1/secret: folder THEIRS/w1 is a symbolic link owned by uid 65534, who could point it anywhere; not followed`},
		{"pidfile-folder", "w1", outside,
			[]string{"--pidfile=THEIRS/%n/node.pid"}, `bad pidfile: THEIRS/w1/node.pid: folder THEIRS/w1 is a symbolic link owned by uid 65534, who could point it anywhere; not followed`},
		{"rundir", "run", outside, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			theirs := filepath.Join(base, c.name)
			os.Mkdir(theirs, 0o755)
			os.Chown(theirs, nobody, nobody)
			link := filepath.Join(theirs, c.link)
			mustOK(t, os.Symlink(c.target, link))
			mustOK(t, os.Lchown(link, nobody, nobody))
			rundir := filepath.Join(theirs, "run")
			var args []string
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "THEIRS", theirs))
			}
			want := "(?m)^w1: FAILED: " + strings.ReplaceAll(c.want, "THEIRS", regexp.QuoteMeta(theirs)) + "$"
			defer killHolder(t, filepath.Join(outside, "node.pid"))
			defer killHolder(t, filepath.Join(rundir, "w1.pid"))
			before := snapshot(t, outside)
			start := append(append([]string{"start", "w1"}, args...), "--", "fakenode", "-max", "1m")
			code, out, errOut := runMulti(t, rundir, nil, start...)
			if c.name == "rundir" {
				// Start and status refuse it as they look for records.
				_, _, serr := runMulti(t, rundir, nil, "status")
				for _, msg := range []string{errOut, serr} {
					if !regexp.MustCompile(`(?m)^multi (start|status): (record|rundir) .*: folder ` + regexp.QuoteMeta(link) + ` is a symbolic link owned by uid 65534`).MatchString(msg) {
						t.Errorf("stderr %q; want the rundir refused", msg)
					}
				}
			} else if code != 1 || !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("start: exit %d, %q; want 1 and %q", code, out, want)
			}
			if c.name == "pidfile-folder" {
				for _, verb := range []string{"stop", "stopwait", "kill"} {
					code, out, _ := runMulti(t, rundir, nil, append([]string{verb, "w1"}, args...)...)
					if code != 1 || !regexp.MustCompile(want).MatchString(out) {
						t.Errorf("%s: exit %d, %q; want 1 and %q", verb, code, out, want)
					}
				}
			}
			if after := snapshot(t, outside); after != before {
				t.Errorf("outside the folder:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// nobody is the other user: the owner of the folder root is given.
const nobody = 65534

// A multi start SIGKILLed while it writes a node's record leaves a temp
// file; the next command removes it. A temp file whose writer is alive is
// kept, and its start completes.
func TestNoTempOutlivesKilledStart(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	rundir := filepath.Join(work, "run")
	fifo := filepath.Join(work, "wait")
	mustOK(t, syscall.Mkfifo(fifo, 0o600))
	hook := "_MULTI_TEST_RECORD_WAIT=" + fifo
	temps := func() []string {
		m, _ := filepath.Glob(filepath.Join(rundir, ".*.tmp*"))
		return m
	}
	// waitTemp waits for the temp file of the start of node name.
	waitTemp := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if m, _ := filepath.Glob(filepath.Join(rundir, "."+name+".tmp*")); len(m) > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no temp file of %s; have %q", name, temps())
			}
		}
	}
	startAt := func(name string) *exec.Cmd {
		cmd := exec.Command(binary(t), "start", name, "--", "fakenode", "-max", "1m")
		cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0", hook)
		mustOK(t, cmd.Start())
		return cmd
	}

	// Each start removes the temp file the start killed before it left.
	const n = 20
	for i := range n {
		name := "k" + string(rune('a'+i))
		cmd := startAt(name)
		waitTemp(name)
		cmd.Process.Kill()
		cmd.Wait()
		if left := temps(); len(left) != 1 || !strings.HasPrefix(filepath.Base(left[0]), "."+name+".tmp") {
			t.Fatalf("after killed start %s: temp files %q; want its own only", name, left)
		}
	}
	// Any next command removes the last one.
	if code, _, _ := runMulti(t, rundir, nil, "status", "w1"); code == 2 {
		t.Fatal("status failed as a usage error")
	}
	if left := temps(); len(left) != 0 {
		t.Fatalf("after the next command, temp files %q", left)
	}

	// A writer still at work, waiting in the hook: its temp file is kept.
	live := startAt("live")
	defer killHolder(t, filepath.Join(rundir, "live.pid"))
	defer live.Process.Kill()
	waitTemp("live")
	runMulti(t, rundir, nil, "status")
	if left := temps(); len(left) != 1 || !strings.HasPrefix(filepath.Base(left[0]), ".live.tmp") {
		t.Errorf("with a live writer, temp files %q; want its own", left)
	}
	// Let the live writer go on: its record is written and its node starts.
	f, err := os.Open(fifo)
	mustOK(t, err)
	f.Close()
	if err := live.Wait(); err != nil {
		t.Errorf("the live start: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rundir, "live.node")); err != nil {
		t.Errorf("the live start's record: %v", err)
	}
	if left := temps(); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}

// A start that fails removes the record it wrote. If the rundir was
// swapped for a link in the meantime, by the owner of the folder it is
// in, the removal must not follow it: a file of the same name elsewhere
// stays.
func TestFailedStartRemovesNoRecordElsewhere(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is on root, by another user (uid 65534)")
	}
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "w1.node"), []byte("root's file\n"), 0o600)
	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, nobody, nobody)
	rundir := filepath.Join(theirs, "run")
	fifo := filepath.Join(base, "wait")
	mustOK(t, syscall.Mkfifo(fifo, 0o600))
	before := snapshot(t, outside)

	// The exec step waits on the FIFO (a test hook) once the record is
	// written; the command, false, then exits at once.
	cmd := exec.Command(binary(t), "start", "w1", "--", "false")
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0", "_MULTI_TEST_STEP_WAIT="+fifo)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	mustOK(t, cmd.Start())
	defer killHolder(t, filepath.Join(rundir+".real", "w1.pid"))
	waitForFile(t, filepath.Join(rundir, "w1.node"))
	mustOK(t, os.Rename(rundir, rundir+".real"))
	mustOK(t, os.Symlink(outside, rundir))
	mustOK(t, os.Lchown(rundir, nobody, nobody))
	// Be the FIFO's reader, so that the step goes on.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	mustOK(t, err)
	err = cmd.Wait()
	r.Close()
	t.Logf("multi start: %v\n%s", err, stdout.String())
	if err == nil || !strings.Contains(stdout.String(), "w1: FAILED") {
		t.Errorf("start: %v, %q; want it failed", err, stdout.String())
	}
	if after := snapshot(t, outside); after != before {
		t.Errorf("outside the folder:\nbefore %s\nafter  %s", before, after)
	}
}
