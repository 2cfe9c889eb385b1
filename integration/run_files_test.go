//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// attackBase makes the folders of an attack on root by another user
// (uid 65534): base (root's, 0755), outside (root's only, 0700) and theirs
// (the user's).
func attackBase(t *testing.T) (base, outside, theirs string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is on root, by another user (uid 65534)")
	}
	base = t.TempDir()
	os.Chmod(base, 0o755)
	outside, theirs = filepath.Join(base, "outside"), filepath.Join(base, "theirs")
	mustOK(t, os.Mkdir(outside, 0o700))
	mustOK(t, os.Mkdir(theirs, 0o755))
	mustOK(t, os.Chown(theirs, nobody, nobody))
	return base, outside, theirs
}

// plant makes a symbolic link of the user's at link, to target.
func plant(t *testing.T, target, link string) {
	t.Helper()
	mustOK(t, os.Symlink(target, link))
	mustOK(t, os.Lchown(link, nobody, nobody))
}

// swapForLink renames the user's folder dir away and puts a link of
// theirs to target in its place.
func swapForLink(t *testing.T, dir, target string) {
	t.Helper()
	mustOK(t, os.Rename(dir, dir+".real"))
	plant(t, target, dir)
}

// waitRegular waits until path is a regular file (not a link to one).
func waitRegular(t *testing.T, path string) {
	t.Helper()
	testutil.PollUntil(t, path+" to be a regular file", func() bool {
		st, err := os.Lstat(path)
		return err == nil && st.Mode().IsRegular()
	})
}

// multi run --ready-file, as root, in a folder another user can write
// (accepted with --allow-shared-folders, so that what is proved is the
// walk and the file's own checks, not the folder rule):
// a link planted at the ready file's name is replaced, never written
// through (root's 0600 file it points to is unchanged); the folder
// swapped for a link while the run runs makes root remove nothing
// elsewhere (it removes its own ready file, in the folder it made it
// in); a folder that is a planted link when the run starts is refused,
// naming it, and nothing starts.
func TestRunReadyFileFollowsNoLink(t *testing.T) {
	t.Parallel()
	_, outside, theirs := attackBase(t)
	secret := filepath.Join(outside, "secret")
	unchanged := testutil.RootFile(t, secret)
	rundir := filepath.Join(t.TempDir(), "run")

	t.Run("planted-link", func(t *testing.T) {
		dir := filepath.Join(theirs, "planted")
		mustOK(t, os.Mkdir(dir, 0o755))
		mustOK(t, os.Chown(dir, nobody, nobody))
		ready := filepath.Join(dir, "ready")
		plant(t, secret, ready)
		work := t.TempDir()
		cmd, done := startRun(t, work, rundir, nil, []string{"r1"}, "r1", "--allow-shared-folders", "--ready-file="+ready, "--", "sleep", "300")
		waitRegular(t, ready)
		unchanged()
		mustOK(t, syscall.Kill(cmd.Process.Pid, syscall.SIGTERM))
		if code := waitRunExit(t, cmd, done, work, 30*time.Second); code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
		if _, err := os.Lstat(ready); err == nil {
			t.Errorf("%s left after the run", ready)
		}
		unchanged()
	})

	t.Run("folder-swapped", func(t *testing.T) {
		dir := filepath.Join(theirs, "swapped")
		mustOK(t, os.Mkdir(dir, 0o755))
		mustOK(t, os.Chown(dir, nobody, nobody))
		ready := filepath.Join(dir, "ready")
		rootReady := filepath.Join(outside, "ready")
		rootUnchanged := testutil.RootFile(t, rootReady)
		work := t.TempDir()
		cmd, done := startRun(t, work, rundir, nil, []string{"r2"}, "r2", "--allow-shared-folders", "--ready-file="+ready, "--", "sleep", "300")
		waitRegular(t, ready)
		swapForLink(t, dir, outside)
		mustOK(t, syscall.Kill(cmd.Process.Pid, syscall.SIGTERM))
		if code := waitRunExit(t, cmd, done, work, 30*time.Second); code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
		if _, err := os.Lstat(rootReady); err != nil {
			t.Errorf("root's %s: %v", rootReady, err)
		} else {
			rootUnchanged()
		}
		if _, err := os.Lstat(filepath.Join(dir+".real", "ready")); err == nil {
			t.Errorf("the run's own ready file, in the folder it made it in, left after the run")
		}
		unchanged()
	})

	t.Run("shared-folder-refused", func(t *testing.T) {
		// Without --allow-shared-folders the folder rule refuses the
		// user's folder before anything starts.
		ready := filepath.Join(theirs, "ready")
		work := t.TempDir()
		cmd, done := startRun(t, work, rundir, nil, []string{"r4"}, "r4", "--ready-file="+ready, "--", "sleep", "300")
		code := waitRunExit(t, cmd, done, work, 30*time.Second)
		errs, _ := os.ReadFile(filepath.Join(work, "run.err"))
		if code != 1 || !strings.Contains(string(errs), "--allow-shared-folders accepts it") {
			t.Errorf("exit %d, %s; want 1 and the folder refused", code, errs)
		}
		if _, err := os.Lstat(ready); err == nil {
			t.Errorf("%s made in a folder that was refused", ready)
		}
		if info, err := pidfile.Inspect(filepath.Join(rundir, "r4.pid")); err == nil && info.State == pidfile.Running {
			t.Errorf("r4 started (pid %d)", info.PID)
		}
	})

	t.Run("folder-link-at-start", func(t *testing.T) {
		link := filepath.Join(theirs, "link")
		plant(t, outside, link)
		before := snapshot(t, outside)
		work := t.TempDir()
		cmd, done := startRun(t, work, rundir, nil, []string{"r3"}, "r3", "--ready-file="+filepath.Join(link, "ready"), "--", "sleep", "300")
		code := waitRunExit(t, cmd, done, work, 30*time.Second)
		errs, _ := os.ReadFile(filepath.Join(work, "run.err"))
		want := regexp.MustCompile(`(?m)^r3: FAILED: ready file ` + regexp.QuoteMeta(filepath.Join(link, "ready")) +
			`: folder ` + regexp.QuoteMeta(link) + ` is a symbolic link owned by uid 65534`)
		if code != 1 || !want.Match(errs) {
			t.Errorf("exit %d, %s; want 1 and %s", code, errs, want)
		}
		if info, err := pidfile.Inspect(filepath.Join(rundir, "r3.pid")); err == nil && info.State == pidfile.Running {
			t.Errorf("r3 started (pid %d)", info.PID)
		}
		if after := snapshot(t, outside); after != before {
			t.Errorf("outside the folder:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// multi run as root, its rundir in another user's folder: the user swaps
// the rundir for a link to a folder of root's while the run runs. The run
// tags there are not touched (nothing is removed through the link), and
// the node, whose pidfile the stop can no longer reach, is still stopped
// (TERM, then KILL after --timeout): it is the run's own child. The run does not claim every lock released,
// and exits 1.
func TestRunTagsFollowNoLink(t *testing.T) {
	t.Parallel()
	_, outside, theirs := attackBase(t)
	rootTag := filepath.Join(outside, "w1.run")
	unchanged := testutil.RootFile(t, rootTag)
	rundir := filepath.Join(theirs, "run")
	work := t.TempDir()
	ready := filepath.Join(work, "ready")
	t.Cleanup(func() { killHolder(t, filepath.Join(rundir+".real", "w1.pid")) })
	// The node ignores TERM: it goes with the KILL after --timeout.
	cmd, done := startRun(t, work, rundir, nil, []string{"w1"}, "w1", "--timeout=2s", "--ready-file="+ready,
		"--", "sh", "-c", "trap '' TERM; : > $0; exec sleep 300", filepath.Join(work, "up"))
	waitForFile(t, ready)
	waitForFile(t, filepath.Join(work, "up"))
	info, err := pidfile.Inspect(filepath.Join(rundir, "w1.pid"))
	mustOK(t, err)
	if info.State != pidfile.Running {
		t.Fatalf("w1: %s; want running", info.State)
	}
	swapForLink(t, rundir, outside)
	mustOK(t, syscall.Kill(cmd.Process.Pid, syscall.SIGTERM))
	code := waitRunExit(t, cmd, done, work, 30*time.Second)
	errs, _ := os.ReadFile(filepath.Join(work, "run.err"))
	t.Logf("multi run: exit %d\n%s", code, errs)
	if code != 1 || strings.Contains(string(errs), "every lock is released") {
		t.Errorf("exit %d; want 1, and no claim that every lock is released\n%s", code, errs)
	}
	testutil.PollUntil(t, "the node to be gone", func() bool { return gone(info.PID) })
	if _, err := os.Lstat(rootTag); err != nil {
		t.Errorf("root's %s: %v", rootTag, err)
	} else {
		unchanged()
	}
	if _, err := os.Lstat(filepath.Join(rundir+".real", "w1.run")); err == nil {
		t.Errorf("the run's own tag, in the rundir it made it in, left after the run")
	}
}
