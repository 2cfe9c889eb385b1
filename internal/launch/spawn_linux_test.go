package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// forkTestNode is a node named name in a fresh folder, running argv.
func forkTestNode(t *testing.T, name string, argv ...string) nodes.Node {
	t.Helper()
	dir := t.TempDir()
	return nodes.Node{Name: name, Command: argv,
		PidFile: filepath.Join(dir, name+".pid"), LogFile: filepath.Join(dir, name+".log")}
}

// bothPaths runs test with nodes forked directly and then through the
// exec step, and checks that each start took the path it was meant to.
func bothPaths(t *testing.T, test func(t *testing.T)) {
	for _, direct := range []bool{true, false} {
		name := map[bool]string{true: "direct", false: "step"}[direct]
		t.Run(name, func(t *testing.T) {
			if direct && !directAvailable() {
				t.Skip("no direct start here: the caller's RLIMIT_NOFILE could not be learnt (ptrace refused), or no direct start on this platform")
			}
			defer func(was bool) { directSpawn = was }(directSpawn)
			directSpawn = direct
			before := directTaken.Load()
			own := ownStandardFDs()
			test(t)
			// The child shares this process's memory until its exec: what it
			// puts at 0, 1 and 2 must land in its own table.
			if now := ownStandardFDs(); now != own {
				t.Errorf("this process's descriptors 0-2 changed by a start: %q, were %q", now, own)
			}
			if got := directTaken.Load() > before; got != direct && !t.Failed() {
				t.Errorf("forked directly: %v, want %v", got, direct)
			}
		})
	}
}

// execd waits until pid's exec of comm is over: its environment is
// readable.
func execd(t *testing.T, pid int, comm string) {
	t.Helper()
	testutil.PollUntil(t, "the exec of "+comm, func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		return strings.TrimSpace(string(b)) == comm && len(env) > 0
	})
}

// ownStandardFDs is what this process's descriptors 0, 1 and 2 are.
func ownStandardFDs() [3]string {
	var fds [3]string
	for fd := range fds {
		fds[fd], _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	}
	return fds
}

// killNode kills a node this test started, by pid, and reaps it.
func killNode(t *testing.T, ch *Child) {
	t.Cleanup(func() {
		syscall.Kill(ch.pid, syscall.SIGKILL)
		ch.cmd.Process.Wait()
	})
}

// Spawn starts the node as a shell would, holding its lock: its own
// process holds the lock on the descriptor named by $MULTI_PIDFILE_FD, its pid is
// in the file, its output goes to the logfile, its input is /dev/null,
// no other descriptor reaches it (not the launcher's, not one it
// inherited), its signals are not blocked, and it leads a session of its
// own.
func TestSpawnStartsNodeHoldingLock(t *testing.T) {
	bothPaths(t, testSpawnStartsNodeHoldingLock)
}

func testSpawnStartsNodeHoldingLock(t *testing.T) {
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
	ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running || info.PID != ch.pid || info.FilePID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want running, held by and naming pid %d", info, err, ch.pid)
	}
	// Spawn returns once the exec has closed the report pipe, which the
	// kernel does before it has set the new program's environment up.
	execd(t, ch.pid, "sleep")
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

// A program that closed its standard descriptors gets its next ones as
// 0, 1 and 2: the step's /dev/null, pipe and pidfile among them. The node
// still gets /dev/null as 0 and its logfile as 1 and 2, and its lock.
func TestSpawnWithStandardDescriptorsClosed(t *testing.T) {
	bothPaths(t, testSpawnWithStandardDescriptorsClosed)
}

func testSpawnWithStandardDescriptorsClosed(t *testing.T) {
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
	ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	for fd, d := range saved {
		unix.Dup2(d, fd)
		unix.Close(d)
	}
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running || info.PID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want held by %d", info, err, ch.pid)
	}
	proc := "/proc/" + strconv.Itoa(ch.pid) + "/fd/"
	for fd, want := range []string{os.DevNull, n.LogFile, n.LogFile} {
		if got, _ := os.Readlink(proc + strconv.Itoa(fd)); got != want {
			t.Errorf("fd %d is %q, want %q", fd, got, want)
		}
	}
}
