// Package integration drives the real multi binary against real child
// processes with testscript scripts in testdata/.
package integration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fakenode": fakeNode,
	})
}

var (
	buildOnce sync.Once
	multiBin  string
	buildErr  error
)

// binary builds multi once per test run, or uses $MULTI_BIN, so that the
// scripts test the real artifact. It is not built in TestMain, which also
// runs each time the test binary is started as fakenode.
func binary(t *testing.T) string {
	buildOnce.Do(func() {
		if b := os.Getenv("MULTI_BIN"); b != "" {
			multiBin, buildErr = filepath.Abs(b)
			return
		}
		dir, err := os.MkdirTemp("", "multi-bin")
		if err != nil {
			buildErr = err
			return
		}
		multiBin = filepath.Join(dir, "multi")
		out, err := exec.Command("go", "build", "-race", "-o", multiBin, "..").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return multiBin
}

func TestScripts(t *testing.T) {
	bin := binary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("MULTI_RUNDIR", filepath.Join(env.WorkDir, "run"))
			env.Setenv("HOSTNAME", nodes.Hostname())
			// multi and fakenode are race-enabled builds, whose runtime
			// otherwise sleeps a second at every exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			work := env.WorkDir
			env.Defer(func() { killLeftovers(env.T(), work) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rc":       cmdRC,
			"holder":   cmdHolder,
			"waitgone": cmdWaitGone,
			"waitfile": cmdWaitFile,
			"signal":   cmdSignal,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
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
		info, err := nodes.Inspect(path)
		if err != nil || info.State != nodes.Running || info.PID <= 1 || info.PID == os.Getpid() {
			return nil
		}
		t.Log("killing leftover node", info.PID, "holding", path)
		syscall.Kill(-info.PID, syscall.SIGKILL) // its session's group: it ran setsid
		syscall.Kill(info.PID, syscall.SIGKILL)
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
	info, err := nodes.Inspect(ts.MkAbs(args[0]))
	ts.Check(err)
	if neg {
		if info.State == nodes.Running || info.State == nodes.Elsewhere {
			ts.Fatalf("%s is locked by pid %d; want no holder", args[0], info.PID)
		}
		return
	}
	if info.State != nodes.Running {
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
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
	ts.Check(syscall.Kill(pid, sig))
}
