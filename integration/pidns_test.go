//go:build unix

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// nsUnitEnv names, in the environment of a test binary started inside a
// new pid namespace, the unit it is to run there: a script in
// testdata/pidns, or "hostile" (the matrix of testHostilePidfiles).
const nsUnitEnv = "MULTI_TEST_PIDNS_UNIT"

const nsLastPid = "/proc/sys/kernel/ns_last_pid"

// TestPidNamespace runs each script of testdata/pidns, and the hostile
// pidfile matrix, in a pid namespace (and mount namespace) of its own:
// `unshare --pid --fork --mount-proc` starts this test binary as the
// namespace's pid 1, and there it runs TestPidNamespaceInner. Everything a
// unit starts (multi, its nodes, fakenodes) lives in the namespace, so a bug
// cannot signal a host process, pids can be forced onto a chosen number
// (ns_last_pid) because nothing else forks there, mounts (a read-only or a
// full tmpfs) vanish with it, and when pid 1 exits the kernel kills
// whatever is left. Needs root.
func TestPidNamespace(t *testing.T) {
	t.Parallel()
	sameEverywhere(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for pid namespaces (CI runs as root)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1) from util-linux for pid namespaces")
	}
	if err := canUnshare(); err != nil {
		t.Skipf("cannot make pid namespaces here: %v", err)
	}
	bin := binary(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob("testdata/pidns/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata/pidns: %v", err)
	}
	units := []string{"hostile"}
	for _, s := range scripts {
		abs, _ := filepath.Abs(s)
		units = append(units, abs)
	}
	for _, unit := range units {
		name := strings.TrimSuffix(filepath.Base(unit), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{"--pid", "--fork", "--mount-proc", "--kill-child", "--", self,
				"-test.run=^TestPidNamespaceInner$", "-test.count=1", "-test.v"}
			if d, ok := t.Deadline(); ok {
				// Time out inside first, so that the output says where.
				left := time.Until(d) * 9 / 10
				args = append(args, "-test.timeout="+left.Round(time.Second).String())
			}
			// The unit's temporary folders (its script's $WORK) in one of
			// this test's, removed here once the namespace is gone: a
			// folder a tmpfs was mounted on in there cannot be removed
			// from inside. A short path: the notify sockets' paths are
			// bounded.
			tmp, err := os.MkdirTemp("", "pidns")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := os.RemoveAll(tmp); err != nil {
					t.Errorf("the unit's temporary folder: %v", err)
				}
			})
			cmd := exec.Command(unshare, args...)
			cmd.Env = append(os.Environ(), nsUnitEnv+"="+unit, "MULTI_BIN="+bin, "GORACE=atexit_sleep_ms=0", "TMPDIR="+tmp)
			out, err := cmd.CombinedOutput()
			switch {
			case bytes.Contains(out, []byte("--- SKIP: TestPidNamespaceInner")):
				t.Skipf("skipped inside the namespace:\n%s", out)
			case err != nil || !bytes.Contains(out, []byte("--- PASS: TestPidNamespaceInner")):
				t.Fatalf("%s in a new pid namespace: %v\n%s", name, err, out)
			}
			t.Logf("%s", out)
		})
	}
}

var (
	unshareOnce sync.Once
	unshareErr  error
)

// canUnshare tries `unshare --pid --fork --mount-proc true` once: root in a
// container without CAP_SYS_ADMIN cannot make namespaces.
func canUnshare() error {
	unshareOnce.Do(func() {
		out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").CombinedOutput()
		if err != nil {
			unshareErr = fmt.Errorf("unshare --pid --fork --mount-proc: %v: %s", err, bytes.TrimSpace(out))
		}
	})
	return unshareErr
}

// TestPidNamespaceInner is what TestPidNamespace runs as pid 1 of a new pid
// namespace. Pid 1 records every catchable signal it gets: multi must never
// signal it, whatever a pidfile says.
func TestPidNamespaceInner(t *testing.T) {
	unit := os.Getenv(nsUnitEnv)
	if unit == "" {
		t.Skip("runs only inside the pid namespace that TestPidNamespace makes")
	}
	if os.Getpid() != 1 {
		t.Fatalf("pid %d; want pid 1 of a new pid namespace", os.Getpid())
	}
	last, err := os.ReadFile(nsLastPid)
	if err == nil {
		err = os.WriteFile(nsLastPid, bytes.TrimSpace(last), 0)
	}
	if err != nil {
		t.Skipf("cannot force pids: %s: %v", nsLastPid, err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGTERM, syscall.SIGALRM)
	defer func() {
		signal.Stop(sigs)
		close(sigs)
		for s := range sigs {
			t.Errorf("pid 1 of the namespace got %v", s)
		}
	}()
	if unit == "hostile" {
		testHostilePidfiles(t)
		return
	}
	p := scriptParams(t)
	p.Files = []string{unit}
	testscript.Run(t, p)
}

// freePid reports whether no process or thread has pid.
func freePid(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return errors.Is(err, os.ErrNotExist)
}

// reapOrphan reaps pid if it is a zombie child of this process that no
// exec.Cmd waits for: a node orphaned to pid 1 of the namespace, whose pid
// is to be handed to another process.
func reapOrphan(pid int, mine []*exec.Cmd) {
	for _, c := range mine {
		if c.Process != nil && c.Process.Pid == pid {
			return
		}
	}
	if procState(pid) != 'Z' || ppid(pid) != os.Getpid() {
		return
	}
	// A zombie leader is waitable only once every thread of its process
	// has exited (a Go node has several): wait for that, it is near.
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

func ppid(pid int) int {
	p, err := proc.Read(pid)
	if err != nil {
		return 0
	}
	return p.PPID
}

// errWrongPid: something else took the pid between ns_last_pid and fork.
var errWrongPid = errors.New("could not force the pid")

// startAt starts cmd so that its process gets pid: it writes pid-1 to
// ns_last_pid and forks at once. Only pid 1 of a private namespace may:
// nothing else forks there but what this test starts. A new thread of a Go
// runtime could still take the pid first: then, with retry, startAt kills
// the process and tries again; without, it leaves it running and returns
// an error matching errWrongPid.
func startAt(pid int, cmd *exec.Cmd, retry bool) error {
	if os.Getpid() != 1 || os.Getenv(nsUnitEnv) == "" {
		return errors.New("forcing a pid needs a private pid namespace (TestPidNamespace)")
	}
	if pid <= 1 {
		return fmt.Errorf("bad pid %d", pid)
	}
	for try := 0; ; try++ {
		if !freePid(pid) {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			return fmt.Errorf("pid %d is taken (state %q, %s)", pid, procState(pid), bytes.TrimSpace(comm))
		}
		if err := os.WriteFile(nsLastPid, []byte(strconv.Itoa(pid-1)), 0); err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		if cmd.Process.Pid == pid {
			return nil
		}
		if !retry || try == 5 {
			return fmt.Errorf("%w %d (got %d)", errWrongPid, pid, cmd.Process.Pid)
		}
		// Something else forked in between: undo, and try again.
		cmd.Process.Kill()
		cmd.Wait()
		cmd = cloneCmd(cmd)
	}
}

func cloneCmd(c *exec.Cmd) *exec.Cmd {
	n := exec.Command(c.Path, c.Args[1:]...)
	n.Args, n.Env, n.Dir, n.Stdin, n.Stdout, n.Stderr = c.Args, c.Env, c.Dir, c.Stdin, c.Stdout, c.Stderr
	return n
}

// scriptCmd builds a command of the script: PATH lookup, environment and
// folder as exec would give it.
func scriptCmd(ts *testscript.TestScript, name string, args ...string) *exec.Cmd {
	path := name
	if filepath.Base(name) == name {
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				path = p
				break
			}
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Args[0] = name
	cmd.Dir = ts.MkAbs(".")
	env := os.Environ()
	for _, k := range []string{"PATH", "WORK", "HOME", "TMPDIR", "MULTI_RUNDIR", "GORACE", "HOSTNAME"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	cmd.Env = env
	return cmd
}

// onpid PID COMMAND [ARGS...] starts COMMAND in the background as pid PID
// of the namespace: an unrelated process forced onto a dead node's pid. A
// node killed before is reaped first if it is a zombie of pid 1. Its
// output goes to $WORK/onpid-PID.log; it is killed when the script ends.
func cmdOnPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: onpid PID command [args...]")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("onpid: bad pid %q", args[0])
	}
	reapOrphan(pid, ts.BackgroundCmds())
	log, err := os.Create(ts.MkAbs(fmt.Sprintf("onpid-%d.log", pid)))
	ts.Check(err)
	defer log.Close()
	cmd := scriptCmd(ts, args[1], args[2:]...)
	cmd.Stdout, cmd.Stderr = log, log
	ts.Check(startAt(pid, cmd, true))
	ts.Logf("started %s as pid %d", args[1], pid)
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}
