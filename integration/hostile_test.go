//go:build unix

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A hostileKind is a broken or hostile thing found where a node's pidfile
// should be.
type hostileKind struct {
	name string
	// text, for a stale pidfile (a regular file nobody has locked): its
	// content, with VICTIM for the victim's pid and SELF for the pid multi
	// itself is forced to run as.
	text string
	// plant makes anything else at path (a folder, a link...), with
	// outside the folder outside the rundir, and returns what every verb
	// must fail with.
	plant func(t *testing.T, path, outside string) (want string)
	// args are given to every verb, after the node's name.
	args []string
}

// testHostilePidfiles runs every verb of multi against every kind of
// broken or hostile pidfile, inside a private pid namespace (see
// TestPidNamespace) so that a bug could not signal a host process. For
// each one it checks the exit status and the message, that a victim process
// whose pid the files name got no signal and still runs, that pid 1 got no
// signal (TestPidNamespaceInner), and that nothing outside the rundir
// changed: a symbolic link is neither followed nor written through.
func testHostilePidfiles(t *testing.T) {
	bin := binary(t)
	work := t.TempDir()
	outside := filepath.Join(work, "outside")
	os.Mkdir(outside, 0o755)

	// The victim: a live process that is no node, whose pid a pidfile
	// names. It logs every catchable signal; SIGKILL would end it.
	siglog := filepath.Join(work, "victim.sig")
	victim := exec.Command("fakenode", "-siglog", siglog, "-pid", filepath.Join(work, "victim.pid"), "-max", "10m")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		victim.Process.Kill()
		victim.Wait()
	}()
	waitForFile(t, filepath.Join(work, "victim.pid"))
	vpid := strconv.Itoa(victim.Process.Pid)
	os.WriteFile(filepath.Join(outside, "target.pid"), []byte(vpid+"\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "other"), []byte("not a pidfile\n"), 0o600)

	kinds := []hostileKind{
		{name: "minus-one", text: "-1\n"},
		{name: "zero", text: "0\n"},
		{name: "one", text: "1\n"},
		{name: "own-pid", text: "SELF\n"},
		{name: "unlocked-live-pid", text: "VICTIM\n"},
		{name: "garbage", text: "garbage\x00\xff\n"},
		{name: "empty", text: ""},
		{name: "one-megabyte", text: strings.Repeat("9", 1<<20)},
		{name: "too-large", text: "99999999999999999999999999\n"},
		{name: "plus-sign", text: "+VICTIM\n"},
		{name: "spaces", text: "  VICTIM  \n"},
		{name: "no-newline", text: "VICTIM"},
		{name: "directory", plant: func(t *testing.T, path, _ string) string {
			mustOK(t, os.Mkdir(path, 0o755))
			mustOK(t, os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o644))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + ` is a directory`
		}},
		{name: "symlink", plant: func(t *testing.T, path, outside string) string {
			mustOK(t, os.Symlink(filepath.Join(outside, "target.pid"), path))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + ` is a symbolic link \(not followed\)`
		}},
		{name: "dangling-symlink", plant: func(t *testing.T, path, outside string) string {
			mustOK(t, os.Symlink(filepath.Join(outside, "created.pid"), path))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + ` is a symbolic link \(not followed\)`
		}},
		{name: "fifo", plant: func(t *testing.T, path, _ string) string {
			mustOK(t, syscall.Mkfifo(path, 0o644))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + ` is a FIFO, not a regular file`
		}},
		{name: "other-users-in-shared-folder", plant: func(t *testing.T, path, _ string) string {
			// The pidfile folder is world-writable (sticky, as /tmp), and
			// the pidfile there belongs to nobody.
			mustOK(t, os.Chmod(filepath.Dir(path), 0o777|fs.ModeSticky))
			mustOK(t, os.WriteFile(path, []byte(vpid+"\n"), 0o644))
			mustOK(t, os.Chown(path, 65534, 65534))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + `: owned by uid 65534, not by this user \(uid 0\) or root, in .*, which others can write to`
		}, args: []string{"--allow-shared-folders"}}, // else the folder is refused first
		{name: "shared-folder", plant: func(t *testing.T, path, _ string) string {
			// The pidfile folder is world-writable (sticky, as /tmp):
			// whatever is in it, refused unless accepted.
			mustOK(t, os.Chmod(filepath.Dir(path), 0o777|fs.ModeSticky))
			mustOK(t, os.WriteFile(path, []byte(vpid+"\n"), 0o600))
			return `bad pidfile: ` + regexp.QuoteMeta(path) + `: folder ` + regexp.QuoteMeta(filepath.Dir(path)) +
				` \(owner uid 0, mode 1777\) can be written by others than root and this user \(uid 0\); refusing it \(--allow-shared-folders accepts it\)$`
		}},
	}
	verbs := []string{"status", "stop", "stopwait", "kill", "restart", "start"}
	for _, k := range kinds {
		for _, verb := range verbs {
			t.Run(k.name+"/"+verb, func(t *testing.T) {
				hostileCase(t, bin, k, verb, filepath.Join(work, k.name, verb), outside, vpid)
				if b, err := os.ReadFile(siglog); err == nil {
					t.Fatalf("the victim (pid %s) got signals: %q", vpid, b)
				}
				if gone(victim.Process.Pid) {
					t.Fatalf("the victim (pid %s) is gone", vpid)
				}
			})
		}
	}
}

func hostileCase(t *testing.T, bin string, k hostileKind, verb, dir, outside, vpid string) {
	rundir := filepath.Join(dir, "run")
	pidfolder := filepath.Join(dir, "pids")
	mustOK(t, os.MkdirAll(rundir, 0o755))
	mustOK(t, os.MkdirAll(pidfolder, 0o755))
	pidPath := filepath.Join(pidfolder, "w1.pid")
	args := append([]string{verb, "w1", "--pidfile=" + filepath.Join(pidfolder, "%n.pid")}, k.args...)
	if verb == "start" || verb == "restart" {
		// No settle window: these cases are about the planted pidfile.
		args = append(args, "--settle=0", "--", "fakenode", "-max", "1m")
	}
	defer killHolder(t, pidPath)
	before := snapshot(t, outside)

	var want string
	var code int
	self := 0
	if k.plant != nil {
		want = k.plant(t, pidPath, outside)
		code = 1
		if verb == "status" {
			code = 4
			want = `^w1: unknown: ` + want
		} else {
			want = `^w1: FAILED: ` + want
		}
	} else {
		text := strings.ReplaceAll(k.text, "VICTIM", vpid)
		if strings.Contains(text, "SELF") {
			self = pickFreePid(t)
			text = strings.ReplaceAll(text, "SELF", strconv.Itoa(self))
		}
		mustOK(t, os.WriteFile(pidPath, []byte(text), 0o644))
		switch verb {
		case "status":
			code, want = 1, `^w1: stale \(pidfile `+regexp.QuoteMeta(pidPath)+` left behind; no process holds its lock\)$`
		case "stop", "stopwait", "kill":
			code, want = 0, `^w1: not running \(stale pidfile removed\)$`
		case "start", "restart":
			code, want = 0, `^w1: started \(pid ([0-9]+)\)$`
		}
	}
	planted := snapshot(t, pidfolder)

	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var err error
	if self > 0 {
		// multi runs as the very pid the pidfile names.
		if err = startAt(self, cmd, false); err == nil || errors.Is(err, errWrongPid) {
			if err != nil {
				cmd.Wait()
				t.Fatal(err)
			}
			err = cmd.Wait()
		}
	} else {
		err = cmd.Run()
	}
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	t.Logf("multi %s: exit %d\n%s%s", strings.Join(args, " "), got, out, stderr.String())
	if got != code {
		t.Errorf("exit status %d; want %d", got, code)
	}
	m := regexp.MustCompile("(?m)" + want).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("stdout %q; want a line matching %q", out, want)
	}

	// Nothing outside the rundir changed: no link was followed.
	if after := snapshot(t, outside); after != before {
		t.Errorf("outside the rundir:\nbefore %s\nafter  %s", before, after)
	}
	switch {
	case k.plant != nil:
		// What was planted is left exactly as it was.
		if after := snapshot(t, pidfolder); after != planted {
			t.Errorf("pidfile folder changed:\nbefore %s\nafter  %s", planted, after)
		}
	case verb == "status":
		if after := snapshot(t, pidfolder); after != planted {
			t.Errorf("status changed the pidfile folder:\nbefore %s\nafter  %s", planted, after)
		}
	case verb == "start" || verb == "restart":
		// The stale file is replaced by the new node's, locked and naming it.
		info, err := pidfile.Inspect(pidPath)
		if err != nil || info.State != pidfile.Running || m == nil || strconv.Itoa(info.PID) != m[1] || info.FilePID != info.PID {
			t.Errorf("after %s: %+v, %v", verb, info, err)
		}
	default:
		if _, err := os.Lstat(pidPath); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale pidfile left: %v", err)
		}
	}
}

// snapshot describes every file under dir: name, mode, owner, size, mtime,
// content (a hash would do; these are small) and link target.
func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v; ", path, err)
			return nil
		}
		st, err := os.Lstat(path)
		if err != nil {
			return nil
		}
		sys := st.Sys().(*syscall.Stat_t)
		fmt.Fprintf(&b, "%s %s %d:%d %d %d", path, st.Mode(), sys.Uid, sys.Gid, st.Size(), st.ModTime().UnixNano())
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			fmt.Fprintf(&b, " -> %s", target)
		case st.Mode().IsRegular() && st.Size() < 4096:
			c, _ := os.ReadFile(path)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("; ")
		return nil
	})
	return b.String()
}

// pickFreePid returns a pid well past the last one handed out, that no
// process or thread has.
func pickFreePid(t *testing.T) int {
	b, err := os.ReadFile(nsLastPid)
	mustOK(t, err)
	last, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for pid := last + 100; ; pid++ {
		if freePid(pid) {
			return pid
		}
	}
}

// killHolder SIGKILLs whatever holds the pidfile's lock (a node a case
// started), and waits until it is gone.
func killHolder(t *testing.T, path string) {
	pid := testutil.Holder(path)
	if pid <= 1 {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
	pollUntil(t, fmt.Sprintf("pid %d to be gone after SIGKILL", pid), func() bool { return gone(pid) })
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
