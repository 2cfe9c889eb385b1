//go:build linux && amd64

package multi

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

// forkTestNode is a node named name in a fresh folder, running argv.
func forkTestNode(t *testing.T, name string, argv ...string) nodes.Node {
	t.Helper()
	dir := t.TempDir()
	return nodes.Node{Name: name, Command: argv,
		PidFile: filepath.Join(dir, name+".pid"), LogFile: filepath.Join(dir, name+".log")}
}

// killNode kills a node this test started, by pid, and reaps it.
func killNode(t *testing.T, ch *child) {
	t.Cleanup(func() {
		syscall.Kill(ch.pid, syscall.SIGKILL)
		ch.cmd.Process.Wait()
	})
}

// The fork path starts the node as the exec step would: its own process
// holds the lock on the descriptor named by $MULTI_PIDFILE_FD, its pid is
// in the file, its output goes to the logfile, its input is /dev/null,
// no other descriptor reaches it (not the launcher's, not one it
// inherited), its signals are not blocked, and it leads a session of its
// own.
func TestForkStartsNodeHoldingLock(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	// A descriptor this process has without close-on-exec, as a caller's
	// pipe would be.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	ch, err, ok := spawnFork(n, os.Environ())
	if !ok {
		t.Fatal("the fork path did not apply")
	}
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running || info.PID != ch.pid || info.FilePID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want running, held by and naming pid %d", info, err, ch.pid)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(ch.pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(string(environ), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if vars[nodes.EnvNode] != n.FullName() || vars[pidfile.EnvPidfile] != n.PidFile {
		t.Errorf("environment: %s=%q %s=%q", nodes.EnvNode, vars[nodes.EnvNode], pidfile.EnvPidfile, vars[pidfile.EnvPidfile])
	}
	fds := map[string]string{}
	proc := "/proc/" + strconv.Itoa(ch.pid) + "/fd/"
	ents, err := os.ReadDir(proc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fds[e.Name()], _ = os.Readlink(proc + e.Name())
	}
	want := map[string]string{"0": os.DevNull, "1": n.LogFile, "2": n.LogFile, vars[pidfile.EnvPidfileFD]: n.PidFile}
	for fd, target := range want {
		if fds[fd] != target {
			t.Errorf("fd %s is %q, want %q", fd, fds[fd], target)
		}
	}
	// What the node opens itself (sleep reads its locale) is its own.
	ours := map[string]bool{}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
				ours[target] = true
			}
		}
	}
	for fd, target := range fds {
		if _, ok := want[fd]; !ok && ours[target] {
			t.Errorf("fd %s (%s) leaked into the node", fd, target)
		}
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(ch.pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "\nSigBlk:\t0000000000000000\n") {
		t.Errorf("the node starts with signals blocked:\n%s", status)
	}
	if sid, _ := unix.Getsid(ch.pid); sid != ch.pid {
		t.Errorf("session %d, want its own (%d)", sid, ch.pid)
	}
}

// A second start of a running node meets its lock in the child, and
// says who holds it; the running node and its pidfile are left alone.
func TestForkHeld(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	ch, err, _ := spawnFork(n, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	_, err, ok := spawnFork(n, os.Environ())
	var held *pidfile.HeldError
	if !ok || !errors.As(err, &held) || held.PID != ch.pid {
		t.Fatalf("second start: %v (ok %v); want held by %d", err, ok, ch.pid)
	}
	if info, _ := pidfile.Inspect(n.PidFile); info.State != pidfile.Running || info.FilePID != ch.pid {
		t.Fatalf("after the second start: %+v; want the first node's", info)
	}
}

// forkTo runs the child of s for node n on a claim of its pidfile, with
// argv as the command, and returns its report.
func forkTo(t *testing.T, n nodes.Node, claim *pidfile.Claim, argv ...string) (uint32, syscall.Errno) {
	t.Helper()
	null, err := devNull()
	if err != nil {
		t.Fatal(err)
	}
	log, err := nodes.OpenLogfile(n.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s := &forkSpec{nullFD: int(null.Fd()), logFD: int(log.Fd()), pidFD: int(claim.File().Fd()), dirFD: -1, fdcwd: -100}
	s.lk.Type = syscall.F_WRLCK
	s.path, _ = syscall.BytePtrFromString(argv[0])
	s.pidfile, _ = syscall.BytePtrFromString(n.PidFile)
	s.argv, _ = syscall.SlicePtrFromStrings(argv)
	s.argv = append(s.argv, nil)
	s.envv = []*byte{nil}
	stage, errno, pid, err := forkReport(s)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := os.FindProcess(pid)
	if stage == 0 {
		t.Cleanup(func() { p.Kill(); p.Wait() })
	} else {
		p.Wait()
	}
	return stage, errno
}

// A pidfile removed or replaced between the launcher's open and the
// child's lock (a multi that found it stale removed it) is not the
// node's: the child must not run the command on a lock of a file no
// longer at the path, which nobody could ever find.
func TestForkPidfileReplacedBeforeLock(t *testing.T) {
	n := forkTestNode(t, "w1")
	claim, err := pidfile.OpenClaim(n.PidFile)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Close()
	other := n.PidFile + ".other"
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, n.PidFile); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	stage, _ := forkTo(t, n, claim, "/bin/sh", "-c", "touch "+marker)
	if stage != forkMoved {
		t.Errorf("stage %d, want %d (moved)", stage, forkMoved)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran on the lock of a replaced pidfile")
	}
}

// A command that cannot be exec'd after the lock was taken: the child
// says why, exits, and the lock goes with it.
func TestForkExecFailsReleasesLock(t *testing.T) {
	n := forkTestNode(t, "w1")
	claim, err := pidfile.OpenClaim(n.PidFile)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Close()
	stage, errno := forkTo(t, n, claim, filepath.Join(t.TempDir(), "missing"))
	if stage != forkExec || errno != syscall.ENOENT {
		t.Errorf("stage %d errno %v, want %d ENOENT", stage, errno, forkExec)
	}
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State == pidfile.Running {
		t.Errorf("after the failed exec: %+v, %v; want the lock released", info, err)
	}
}

// What applies to the fork path and what goes through the exec step.
func TestForkApplies(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	self := n
	self.SelfLock = true
	missing := forkTestNode(t, "w1", "no-such-program-here")
	rel := n
	rel.PidFile = "w1.pid"
	for _, c := range []struct {
		name string
		n    nodes.Node
		env  []string
	}{
		{"self-locking", self, os.Environ()},
		{"not on PATH", missing, os.Environ()},
		{"relative pidfile", rel, os.Environ()},
		{"hold-lock hook", n, append(os.Environ(), testhooks.EnvHoldLock+"=/x")},
		{"relative PATH element", n, []string{"PATH=bin:/usr/bin:/bin"}},
	} {
		if ch, err, ok := spawnFork(c.n, c.env); ok {
			if ch != nil {
				killNode(t, ch)
			}
			t.Errorf("%s: the fork path applied (%v); want the exec step", c.name, err)
		}
	}
}

// A descriptor of the same pidfile open elsewhere in this process when
// the node forks (another start of it, a status, a wait) must not cost
// the node its lock: closed at the exec after the lock was taken, it
// would drop the lock (see package nodes/pidfile's doc).
func TestForkKeepsLockWithPidfileOpenHere(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	claim, err := pidfile.OpenClaim(n.PidFile)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Close()
	ch, err, ok := spawnFork(n, os.Environ())
	if !ok || err != nil {
		t.Fatalf("start: %v (ok %v)", err, ok)
	}
	killNode(t, ch)
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running || info.PID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want held by %d", info, err, ch.pid)
	}
}

// A program that closed its standard descriptors gets its next ones as
// 0, 1 and 2: the fork path leaves such a start to the exec step, whose
// child sorts the descriptors out, rather than overwrite the logfile's or
// the pidfile's with /dev/null.
func TestForkLowDescriptorsUseStep(t *testing.T) {
	if _, err := devNull(); err != nil { // opened once, before
		t.Fatal(err)
	}
	var saved [3]int
	for fd := range saved {
		d, err := unix.Dup(fd)
		if err != nil {
			t.Fatal(err)
		}
		saved[fd] = d
	}
	for fd := range saved {
		unix.Close(fd)
	}
	n := forkTestNode(t, "w1", "sleep", "300")
	ch, err, ok := spawnFork(n, os.Environ())
	for fd, d := range saved {
		unix.Dup2(d, fd)
		unix.Close(d)
	}
	if ok {
		if ch != nil {
			killNode(t, ch)
		}
		t.Fatalf("the fork path ran with descriptors 0-2 free (%v); want the exec step", err)
	}
}
