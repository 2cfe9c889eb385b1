package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"golang.org/x/sys/unix"
)

var (
	prodOnce sync.Once
	prodBin  string
	prodErr  error
)

// production builds multi as make build does: no -tags multitest, no
// race detector.
func production(t *testing.T) string {
	prodOnce.Do(func() {
		dir, err := buildDir("multi-prod")
		if err != nil {
			prodErr = err
			return
		}
		prodBin = filepath.Join(dir, "multi")
		if b, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", prodBin, "..").CombinedOutput(); err != nil {
			prodErr = &exec.Error{Name: "go build: " + string(b), Err: err}
		}
	})
	if prodErr != nil {
		t.Fatal(prodErr)
	}
	return prodBin
}

// openedForWriting makes a FIFO at path and returns a function that
// reports whether anything opened it for writing since: its reader,
// opened without blocking, sees POLLHUP only once a writer has come
// and gone (Linux), and never blocks one.
func openedForWriting(t *testing.T, path string) func() bool {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return func() bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		return err == nil && n == 1 && p[0].Revents&unix.POLLHUP != 0
	}
}

// The _MULTI_TEST_* hooks do nothing in a production build, set in
// multi's environment or in a node's --env: no lock held for a test, no
// FIFO opened.
func TestHooksOffInProduction(t *testing.T) {
	t.Parallel()
	prod := production(t)
	work := t.TempDir()
	rundir := filepath.Join(work, "run")
	t.Cleanup(func() {
		for _, n := range []string{"w1", "w2"} {
			if pid := testutil.Holder(filepath.Join(rundir, n+".pid")); pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	hold := filepath.Join(work, "hold")     // exists: a hooked hold would not wait
	holdEnv := filepath.Join(work, "hold2") // the same, through --env
	for _, p := range []string{hold, holdEnv} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stepOpened := openedForWriting(t, filepath.Join(work, "step.fifo"))
	stepEnvOpened := openedForWriting(t, filepath.Join(work, "step2.fifo"))
	recordOpened := openedForWriting(t, filepath.Join(work, "record.fifo"))

	run := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command(prod, args...)
		cmd.Env = append(os.Environ(), append([]string{"MULTI_RUNDIR=" + rundir}, env...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("multi %q: %v\n%s", args, err, out)
		}
	}
	run([]string{"_MULTI_TEST_HOLD_LOCK=" + hold, "_MULTI_TEST_STEP_WAIT=" + filepath.Join(work, "step.fifo"),
		"_MULTI_TEST_RECORD_WAIT=" + filepath.Join(work, "record.fifo")},
		"start", "w1", "--", "sleep", "300")
	run(nil, "start", "w2", "--env", "_MULTI_TEST_HOLD_LOCK="+holdEnv,
		"--env", "_MULTI_TEST_STEP_WAIT="+filepath.Join(work, "step2.fifo"), "--", "sleep", "300")
	for _, p := range []string{hold, holdEnv} {
		if _, err := os.Stat(p + ".held"); err == nil {
			t.Errorf("%s.held written: the hold-lock hook acted in a production build", p)
		}
	}
	if stepOpened() || stepEnvOpened() {
		t.Errorf("the exec step's FIFO hook acted in a production build (environment: %v, --env: %v)", stepOpened(), stepEnvOpened())
	}
	if recordOpened() {
		t.Error("the record writer's FIFO hook acted in a production build")
	}
	run(nil, "stopwait", "w1", "w2")
}

// A production build links none of the hooks' code: no function of
// package testhooks (its hook points are nil variables there) and none
// of the _MULTI_TEST_* names. The multitest build the scripts use has
// both, so the checks can see them.
func TestHookCodeNotInProduction(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	hookCode := func(bin string) (funcs []string, names bool) {
		t.Helper()
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && (f[1] == "T" || f[1] == "t") && strings.Contains(f[2], "/internal/testhooks.") {
				funcs = append(funcs, f[2])
			}
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		return funcs, bytes.Contains(b, []byte("_MULTI_TEST_"))
	}
	if funcs, names := hookCode(production(t)); len(funcs) > 0 || names {
		t.Errorf("production build: hook functions %q, _MULTI_TEST_ names %v; want none", funcs, names)
	}
	if funcs, names := hookCode(binary(t)); len(funcs) == 0 || !names {
		t.Errorf("multitest build: hook functions %q, _MULTI_TEST_ names %v; want both (the check sees nothing)", funcs, names)
	}
}
