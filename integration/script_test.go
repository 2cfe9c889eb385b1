//go:build unix

// Package integration drives the real multi binary against real child
// processes with testscript scripts in testdata/.
package integration

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(sweptM{m}, map[string]func(){
		"fakenode": fakeNode,
		"sigblock": sigBlock,
	})
}

// sweptM runs the tests, then removes the empty cgroup folders they left
// (see testutil.SweepCgroups).
type sweptM struct{ m *testing.M }

func (s sweptM) Run() int {
	flag.Parse()
	parallelByDefault()
	if testutil.Emulator() != "" {
		go breakStuckForks()
	}
	sweep := testutil.SweepCgroups()
	defer sweep()
	defer removeBuilds()
	return s.m.Run()
}

// parallelByDefault runs two tests per CPU at a time unless
// -test.parallel says otherwise: the scripts and tests here mostly wait
// for processes to start, lock and end, and leave the CPUs half idle
// at one per CPU.
func parallelByDefault() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

// sameEverywhere skips, under -short, a test whose subject is the same on
// every architecture and which is slow under an emulator: make test-arm64
// runs -short, and make test runs it. Scripts say the same with
// [short] skip.
func sameEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("the same on every architecture (make test-arm64 runs -short)")
	}
}

// builds are the folders of the programs the tests built (binary,
// production), removed once the tests are over.
var (
	buildsMu sync.Mutex
	builds   []string
)

// buildDir makes a folder for built programs, removed by removeBuilds.
func buildDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err == nil {
		buildsMu.Lock()
		builds = append(builds, dir)
		buildsMu.Unlock()
	}
	return dir, err
}

func removeBuilds() {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	for _, d := range builds {
		os.RemoveAll(d)
	}
}

var (
	buildOnce sync.Once
	multiBin  string // plain: as users run it
	raceBin   string // built with the race detector when the tests are
	buildErr  error
)

// programs are what binary builds: multi, and the two Go programs of
// testdata/ that use the library.
var programs = []string{"..", "./testdata/orchestrator", "./testdata/selfnode"}

// binary builds multi once per test run, or uses $MULTI_BIN, so that the
// scripts test the real artifact; beside it go the two Go programs of
// testdata/ that use the library (orchestrator, selfnode). Each is built
// with -tags multitest, in which the _MULTI_TEST_* hooks act (package
// testhooks): a $MULTI_BIN built without it fails the scripts that use
// them (brief_locks, crash, TestRootFollowsNoPlantedLink). It is not built
// in TestMain, which also runs each time the test binary is started as
// fakenode.
//
// They are built without the race detector: a race-enabled multi takes
// six times the CPU of a plain one to start, and the scripts start it
// hundreds of times. What runs goroutines side by side (multi run,
// commands racing on the same nodes) is tested with [raceBinary] too.
func binary(t *testing.T) string {
	buildOnce.Do(build)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return multiBin
}

// raceBinary is multi built with the race detector, in a folder of its own
// with orchestrator and selfnode, when the tests have it (raceBuild), and
// else [binary]'s. Scripts reach it by putting $RACEBIN first on $PATH.
func raceBinary(t *testing.T) string {
	buildOnce.Do(build)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return raceBin
}

// build builds the programs for binary and raceBinary, the two variants
// side by side.
func build() {
	dir, err := buildDir("multi-bin")
	if err != nil {
		buildErr = err
		return
	}
	multiBin, raceBin = filepath.Join(dir, "multi"), filepath.Join(dir, "multi")
	pkgs := programs
	if b := os.Getenv("MULTI_BIN"); b != "" {
		if buildErr = os.Symlink(must(filepath.Abs(b)), multiBin); buildErr != nil {
			return
		}
		pkgs, raceBuild = programs[1:], nil
	}
	goBuild := func(out string, flags []string, pkgs []string) error {
		args := append(append([]string{"build", "-tags", "multitest,urfave_cli_no_docs"}, flags...), "-o", out+"/")
		if b, err := exec.Command("go", append(args, pkgs...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s %s: %v\n%s", strings.Join(flags, " "), strings.Join(pkgs, " "), err, b)
		}
		return nil
	}
	var raceErr error
	var wg sync.WaitGroup
	if len(raceBuild) > 0 {
		raceBin = filepath.Join(dir, "race", "multi")
		wg.Go(func() { raceErr = goBuild(filepath.Dir(raceBin), raceBuild, programs) })
	}
	buildErr = errors.Join(goBuild(dir, nil, pkgs), func() error { wg.Wait(); return raceErr }())
}

func TestScripts(t *testing.T) {
	t.Parallel()
	p := scriptParams(t)
	p.Dir = "testdata"
	testscript.Run(t, p)
}

// scriptParams are the testscript parameters of every script, on the host
// (TestScripts) and inside a private pid namespace (TestPidNamespace).
func scriptParams(t *testing.T) testscript.Params {
	bin, race := binary(t), raceBinary(t)
	return testscript.Params{
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			// A script about goroutines side by side drives the race-enabled
			// build: env PATH=$RACEBIN${:}$PATH.
			env.Setenv("RACEBIN", filepath.Dir(race))
			env.Setenv("MULTI_RUNDIR", filepath.Join(env.WorkDir, "run"))
			if v := os.Getenv("MULTI_CONTAINMENT"); v != "" {
				// Given to the test binary (the pid-namespace units):
				// testscript passes no variable on by itself.
				env.Setenv("MULTI_CONTAINMENT", v)
			}
			env.Setenv("HOSTNAME", nodes.Hostname())
			env.Setenv("CONTRIB", must(filepath.Abs("../contrib/systemd")))
			// fakenode (and $RACEBIN's multi) are race-enabled builds,
			// whose runtime otherwise sleeps a second at every exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// A settle window a Go node (fakenode) that exits at once is
			// sure to fail within: under an emulator (make test-arm64)
			// a Go program takes about 0.3 s to start, the default window.
			env.Setenv("GOSETTLE", multi.DefaultSettle.String())
			if testutil.Emulator() != "" {
				env.Setenv("GOSETTLE", "5s")
			}
			work := env.WorkDir
			env.Defer(func() { killLeftovers(env.T(), work) })
			env.Defer(func() { killCgroups(filepath.Join(work, "run")) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rc":       cmdRC,
			"holder":   cmdHolder,
			"waitgone": cmdWaitGone,
			"waitfile": cmdWaitFile,
			"signal":   cmdSignal,
			"bgpid":    cmdBgPid,
			"envfile":  cmdEnvFile,
			"alive":    cmdAlive,
			"zombie":   cmdZombie,
			"onpid":    cmdOnPid,
			"unlocked": cmdUnlocked,
			"locked":   cmdLocked,
			"cleanup":  cmdCleanup,
			"waitgrep": cmdWaitGrep,
			"selflock": cmdSelfLock,
			// multi run as a container's pid 1 (run_linux_test.go).
			"nsrun":      cmdNsRun,
			"nswait":     cmdNsWait,
			"held":       cmdHeld,
			"orphan":     cmdOrphan,
			"reaped":     cmdReaped,
			"notifysock": cmdNotifySock,
			"lockwaiter": cmdLockWaiter,
			"parity":     cmdParity,
			"marked":     cmdMarked,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "unshare":
				// Root may make pid namespaces here (unshare(1) works).
				return os.Geteuid() == 0 && canUnshare() == nil, nil
			case "subreaper":
				// A process can become a child subreaper (not under
				// qemu-user, which answers EINVAL).
				return canSubreaper(), nil
			case "cgroup":
				// multi can make a cgroup v2 folder for its nodes here.
				return canCgroup(), nil
			case "limit:memory", "limit:cpu", "limit:pids":
				// multi can apply a cgroup v2 limit of that controller
				// to its nodes here.
				return canLimit(strings.TrimPrefix(cond, "limit:")), nil
			case "pidns":
				// Pid 1 of a private pid namespace: TestPidNamespace.
				return os.Getpid() == 1 && os.Getenv(nsUnitEnv) != "", nil
			case "celery":
				// A python3 that imports celery (Debian's python3-celery).
				return exec.Command(celeryPython, "-c", "import celery").Run() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
}

// killLeftovers SIGKILLs the process group of every process that still
// holds a pidfile's lock anywhere under the script's work folder, so that
// no script leaks a node even when it fails half way. Nodes are found by
// their locks, never by name.
func killLeftovers(t testscript.T, work string) {
	filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".pid") {
			return nil
		}
		pid := testutil.Holder(path)
		if pid <= 1 {
			return nil
		}
		t.Log("killing leftover node", pid, "holding", path)
		syscall.Kill(-pid, syscall.SIGKILL) // its session's group: it ran setsid
		syscall.Kill(pid, syscall.SIGKILL)
		return nil
	})
}

// rc N CMD ARGS... runs CMD like exec and checks that it exits with
// status N; its stdout and stderr are then checked as after exec.
func cmdRC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: rc N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("rc: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("rc: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d; want %d", args[1], got, want)
	}
}

// holder PIDFILE [COMM] checks that a live process holds PIDFILE's lock,
// that the pidfile's first line is its pid, and, if given, that its
// command name (/proc/PID/comm) is COMM. It sets $PID to the holder's pid.
// With !, it checks that no process holds the lock (or that there is no
// pidfile).
func cmdHolder(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: holder pidfile [comm]")
	}
	info, err := pidfile.Inspect(ts.MkAbs(args[0]))
	ts.Check(err)
	if neg {
		if info.State == pidfile.Running || info.State == pidfile.Elsewhere {
			ts.Fatalf("%s is locked by pid %d; want no holder", args[0], info.PID)
		}
		return
	}
	if info.State != pidfile.Running {
		ts.Fatalf("%s: state %s; want a running holder", args[0], info.State)
	}
	if info.FilePID != info.PID {
		ts.Fatalf("%s says %d (%v); lock holder is %d", args[0], info.FilePID, info.FileErr, info.PID)
	}
	if len(args) == 2 {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", info.PID))
		ts.Check(err)
		if got := strings.TrimSpace(string(comm)); got != args[1] {
			ts.Fatalf("holder of %s is %q; want %q", args[0], got, args[1])
		}
	}
	ts.Setenv("PID", strconv.Itoa(info.PID))
}

// waitgone PID... waits until each process has exited; a zombie counts as
// gone (this machine's init reaps orphans only every few seconds).
func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: waitgone pid...")
	}
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil || pid <= 1 {
			ts.Fatalf("waitgone: bad pid %q", a)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !gone(pid) {
			if time.Now().After(deadline) {
				ts.Fatalf("pid %d still running", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// gone reports whether pid has exited: no such process, or a zombie.
func gone(pid int) bool {
	p, err := proc.Read(pid)
	return err != nil || p.Gone()
}

// waitfile FILE... waits until each file exists.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: waitfile file...")
	}
	for _, a := range args {
		path := ts.MkAbs(a)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(path); err == nil {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s did not appear", a)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// signal SIG PID sends a signal to a process the script knows by pid.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME|NUMBER pid")
	}
	pid, err := strconv.Atoi(args[1])
	if err != nil || pid <= 1 || pid == os.Getpid() {
		ts.Fatalf("signal: refusing pid %q", args[1])
	}
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}
	sig, ok := sigs[args[0]]
	if !ok {
		ts.Fatalf("signal: unknown signal %q", args[0])
	}
	if sig == syscall.SIGSTOP {
		// A stopped process would not hear the interrupt that ends the
		// script's background commands: let it go on at the end.
		ts.Defer(func() { syscall.Kill(pid, syscall.SIGCONT) })
	}
	ts.Check(syscall.Kill(pid, sig))
	if sig == syscall.SIGSTOP {
		// kill returns before every thread has stopped: wait until none
		// can run any more.
		deadline := time.Now().Add(30 * time.Second)
		for !allStopped(pid) {
			if time.Now().After(deadline) {
				ts.Fatalf("pid %d did not stop", pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// allStopped reports whether every thread of pid is stopped (or the
// process is gone).
func allStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, task := range tasks {
		p, err := proc.ReadAt(filepath.Join(fmt.Sprintf("/proc/%d/task", pid), task.Name(), "stat"))
		if err != nil {
			continue
		}
		if st := p.State; st != 'T' && st != 't' && st != 'Z' && st != 'X' {
			return false
		}
	}
	return true
}

// bgpid VAR sets $VAR to the pid of the most recent background command
// (exec ... &name&), so that the script can signal it (STOP, CONT, KILL).
func cmdBgPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: bgpid VAR")
	}
	cmds := ts.BackgroundCmds()
	if len(cmds) == 0 || cmds[len(cmds)-1].Process == nil {
		ts.Fatalf("bgpid: no background command")
	}
	ts.Setenv(args[0], strconv.Itoa(cmds[len(cmds)-1].Process.Pid))
}

// envfile VAR FILE sets $VAR to FILE's first line.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	line, _, _ := strings.Cut(string(b), "\n")
	ts.Setenv(args[0], strings.TrimSpace(line))
}

// alive PID... checks that each process runs (exists and is not a zombie);
// with !, that each has exited.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: alive pid...")
	}
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil || pid <= 0 {
			ts.Fatalf("alive: bad pid %q", a)
		}
		if gone(pid) != neg {
			if neg {
				ts.Fatalf("pid %d is still running", pid)
			}
			ts.Fatalf("pid %d is not running", pid)
		}
	}
}

// zombie PID checks that the process has exited and is not yet reaped.
// It waits for the zombie: the kernel drops an exiting process's locks
// (and a SIGKILLed one is signalled) before the process becomes a zombie,
// so a released lock may still show the process running for a moment.
// A process that is gone (reaped) fails at once.
func cmdZombie(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: zombie pid")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		ts.Fatalf("zombie: bad pid %q", args[0])
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := procState(pid)
		if st == 'Z' {
			return
		}
		if st == 0 || time.Now().After(deadline) {
			ts.Fatalf("pid %d: state %q; want a zombie", pid, st)
		}
		time.Sleep(time.Millisecond)
	}
}

// procState returns a process's state letter from /proc/PID/stat, 0 when
// there is no such process.
func procState(pid int) byte {
	p, err := proc.Read(pid)
	if err != nil {
		return 0
	}
	return p.State
}

// unlocked PIDFILE waits until no process holds PIDFILE's lock (or there
// is no PIDFILE). A SIGKILLed Go program shows as a zombie while its other
// threads still exit; its locks go only with the last of them.
func cmdUnlocked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: unlocked pidfile")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := pidfile.Inspect(ts.MkAbs(args[0]))
		ts.Check(err)
		if info.State == pidfile.Absent || info.State == pidfile.Stale {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s is still locked by pid %d", args[0], info.PID)
		}
		time.Sleep(time.Millisecond)
	}
}

// locked PIDFILE waits until a live process holds PIDFILE's lock and the
// file names it: a node, or its exec step, settled.
func cmdLocked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: locked pidfile")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := pidfile.Inspect(ts.MkAbs(args[0]))
		ts.Check(err)
		if info.State == pidfile.Running && info.FilePID == info.PID {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: %s, pid %d, file says %d; want locked by the pid it names", args[0], info.State, info.PID, info.FilePID)
		}
		time.Sleep(time.Millisecond)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// waitgrep FILE REGEXP waits until a line of FILE matches REGEXP.
func cmdWaitGrep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitgrep file regexp")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s never matched %q", args[0], args[1])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// selflock PIDFILE makes the script's own process lock PIDFILE as a node
// does (pid 1 in TestPidNamespace, where multi must refuse to signal it),
// until the script ends.
func cmdSelfLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: selflock pidfile")
	}
	l, err := pidfile.Acquire(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { l.Release() })
}
