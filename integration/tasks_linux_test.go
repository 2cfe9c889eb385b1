package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"golang.org/x/sys/unix"
)

// pidsCgroupV1 is the cgroup v1 hierarchy of the pids controller, where
// root can make a cgroup with a pids.max (what systemd's TasksMax= and
// docker --pids-limit set).
const pidsCgroupV1 = "/sys/fs/cgroup/pids"

// Under a cgroup's pids.max, multi start of more nodes than fit neither
// dies in the Go runtime (it did: "fatal error: newosproc", exit 2, nodes
// running unreported) nor leaves a pidfile or record without its node:
// each node is started, its pidfile locked by the pid reported, or FAILED
// naming the limit; exit 1. Rounds, as the failure was a race.
func TestTaskLimitPidsMax(t *testing.T) {
	t.Parallel()
	testutil.NeedRoot(t)
	if _, err := os.Stat(filepath.Join(pidsCgroupV1, "cgroup.procs")); err != nil {
		t.Skipf("needs the cgroup v1 pids controller at %s: %v", pidsCgroupV1, err)
	}
	bin := binary(t)
	for round := range 3 {
		cg := filepath.Join(pidsCgroupV1, fmt.Sprintf("multi-test-%d-%d", os.Getpid(), round))
		mustOK(t, os.Mkdir(cg, 0o755))
		t.Cleanup(func() { killCgroup(t, cg) })
		mustOK(t, os.WriteFile(filepath.Join(cg, "pids.max"), []byte("25"), 0o644))
		rundir := t.TempDir()
		// The shell moves itself into the cgroup, then becomes multi.
		cmd := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, bin, "start", "100", "--", "sleep", "1000")
		code, out := runLimited(t, cmd, rundir)
		checkLimited(t, code, out, rundir, 100, "pids.max 25 of cgroup /"+filepath.Base(cg))
		if procs := readLines(t, filepath.Join(cg, "cgroup.procs")); len(procs) != countStarted(out) {
			t.Errorf("round %d: %d processes in the cgroup, %d nodes reported started: %v", round, len(procs), countStarted(out), procs)
		}
		killCgroup(t, cg)
	}
}

// The same under RLIMIT_NPROC (ulimit -u), which counts every task of a
// user, as a user of its own (a uid nothing else runs as): the issue's
// `ulimit -u 150; multi start 200`, and a tighter limit.
func TestTaskLimitNproc(t *testing.T) {
	t.Parallel()
	testutil.NeedRoot(t) // to run multi as a user of its own
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash, for ulimit -u")
	}
	// Users of their own: a killed node is counted until it is reaped,
	// which this machine's PID 1 may take seconds to do.
	uid0 := 700000 + os.Getpid()%100000*4
	base := t.TempDir()
	// The user must reach the program: the test's own temp folders.
	mustOK(t, os.Chmod(filepath.Dir(base), 0o755))
	mustOK(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "multi")
	copyFile(t, binary(t), bin)
	for i, c := range []struct{ limit, nodes int }{{60, 100}, {60, 100}, {60, 100}, {60, 100}, {150, 200}} {
		uid := uid0 + i
		t.Cleanup(func() { killUID(t, uid) })
		rundir := filepath.Join(base, fmt.Sprintf("run%d", i))
		mustOK(t, os.Mkdir(rundir, 0o700))
		mustOK(t, os.Chown(rundir, uid, uid))
		cmd := exec.Command(bash, "-c", fmt.Sprintf(`ulimit -u %d && exec "$@"`, c.limit), "bash", bin, "start", strconv.Itoa(c.nodes), "--", "sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		// The nodes' working folder is the user's own rundir, not the
		// checkout, which the user may not reach (a clone in a 0700 folder).
		cmd.Dir = rundir
		code, out := runLimited(t, cmd, rundir)
		checkLimited(t, code, out, rundir, c.nodes, fmt.Sprintf("RLIMIT_NPROC (ulimit -u) %d of uid %d", c.limit, uid))
		if procs := uidProcs(uid); len(procs) != countStarted(out) {
			t.Errorf("ulimit -u %d: %d processes of uid %d, %d nodes reported started", c.limit, len(procs), uid, countStarted(out))
		}
		killUID(t, uid)
	}
}

// runLimited runs cmd, a multi start, with the rundir, and returns its
// exit code and its output (stdout and stderr together).
func runLimited(t *testing.T, cmd *exec.Cmd, rundir string) (int, string) {
	t.Helper()
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

var (
	startedLine = regexp.MustCompile(`^(celery\d+): started \(pid (\d+)\)$`)
	failedLine  = regexp.MustCompile(`^(celery\d+): FAILED: (.*)$`)
)

func countStarted(out string) int {
	n := 0
	for line := range strings.Lines(out) {
		if startedLine.MatchString(strings.TrimSpace(line)) {
			n++
		}
	}
	return n
}

// checkLimited checks multi start's exit code and output, and the
// rundir: no crash, exit 1, each of n nodes started (its pidfile locked
// by the pid reported) or FAILED naming the limit, and no pidfile or
// record, nor logfile, but a started node's: a node refused for want of
// room is refused before anything of it is made.
func checkLimited(t *testing.T, code int, out, rundir string, n int, limit string) {
	t.Helper()
	if strings.Contains(out, "fatal error") || strings.Contains(out, "goroutine ") {
		t.Fatalf("multi died in the runtime (exit %d):\n%.3000s", code, out)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (some node failed)", code)
	}
	seen := map[string]string{} // node -> "started" or "failed"
	bad := 0
	errorf := func(format string, args ...any) {
		t.Helper()
		if bad++; bad <= 5 {
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if bad > 5 {
			t.Errorf("... and %d more", bad-5)
		}
	}()
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if m := startedLine.FindStringSubmatch(line); m != nil {
			seen[m[1]] = "started"
			pid, _ := strconv.Atoi(m[2])
			if holder, err := lockHolder(filepath.Join(rundir, m[1]+".pid")); err != nil || holder != pid {
				errorf("%s reported started as pid %d, but its pidfile's lock is held by pid %d (%v)", m[1], pid, holder, err)
			}
			continue
		}
		if m := failedLine.FindStringSubmatch(line); m != nil {
			seen[m[1]] = "failed"
			if !strings.Contains(m[2], "task limit") || !strings.Contains(m[2], limit) {
				errorf("%s failed without naming the limit %q: %s", m[1], limit, m[2])
			}
			continue
		}
		errorf("unexpected output line: %q", line)
	}
	if len(seen) != n {
		errorf("%d of %d nodes reported", len(seen), n)
	}
	started := 0
	for _, v := range seen {
		if v == "started" {
			started++
		}
	}
	if started == 0 || started == n {
		errorf("%d of %d nodes started: the limit was not met", started, n)
	}
	entries, err := os.ReadDir(rundir)
	mustOK(t, err)
	for _, e := range entries {
		name, ext, _ := strings.Cut(e.Name(), ".")
		if (ext == "pid" || ext == "node" || ext == "log") && seen[name] != "started" {
			errorf("%s left in the rundir for a node that does not run (%s)", e.Name(), seen[name])
		}
	}
	t.Logf("%d of %d nodes started under %s", started, n, limit)
}

// lockHolder is the pid that holds a whole-file write lock on path,
// which may be another user's file (pidfile.Inspect, as root, refuses
// such a file), 0 if none.
func lockHolder(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return 0, err
	}
	if lk.Type == unix.F_UNLCK {
		return 0, nil
	}
	return int(lk.Pid), nil
}

// killCgroup SIGKILLs every process in the cgroup, each through a pidfd
// that pins it, waits until none is left, and removes the cgroup.
func killCgroup(t *testing.T, cg string) {
	t.Helper()
	if _, err := os.Stat(cg); err != nil {
		return
	}
	kill := func() bool {
		procs := readLines(t, filepath.Join(cg, "cgroup.procs"))
		for _, p := range procs {
			pid, err := strconv.Atoi(p)
			if err == nil && pid > 1 && pid != os.Getpid() {
				killPinned(pid, func() bool { return true })
			}
		}
		return len(procs) == 0
	}
	testutil.PollUntil(t, "the processes of "+cg+" to be gone", kill)
	if err := os.Remove(cg); err != nil {
		t.Errorf("remove cgroup: %v", err)
	}
}

// killUID SIGKILLs every process whose real uid is uid, found by pid in
// /proc and pinned by a pidfd, and waits until none is left but zombies.
func killUID(t *testing.T, uid int) {
	t.Helper()
	testutil.PollUntil(t, fmt.Sprintf("the processes of uid %d to be gone", uid), func() bool {
		procs := uidProcs(uid)
		for _, pid := range procs {
			killPinned(pid, func() bool { return procUID(pid) == uid })
		}
		return len(procs) == 0
	})
}

// killPinned SIGKILLs pid through a pidfd, if still check() once pinned.
func killPinned(pid int, check func() bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if check() {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// uidProcs lists the processes, not zombies, whose real uid is uid.
func uidProcs(uid int) []int {
	names, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(filepath.Base(name))
		if err == nil && procUID(pid) == uid && procState(pid) != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// procUID is pid's real uid, -1 if unknown.
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return -1
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	mustOK(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	mustOK(t, err)
	_, err = io.Copy(out, in)
	mustOK(t, err)
	mustOK(t, out.Close())
}
