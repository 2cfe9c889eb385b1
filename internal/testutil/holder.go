package testutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Holder is the pid of the process that holds the lock on the pidfile at
// path, as the kernel says ([pidfile.Inspect]), or 0 when there is none
// or it is this process: a pid a test may kill (never <= 1).
func Holder(path string) int {
	info, err := pidfile.Inspect(path)
	if err != nil || info.State != pidfile.Running || info.PID <= 1 || info.PID == os.Getpid() {
		return 0
	}
	return info.PID
}

// The roles a test binary plays when [StartHolder] or [SeenFromChild]
// re-executes it: the role, and the pidfile it acts on.
const (
	roleEnv = "MULTI_TESTUTIL_ROLE"
	pathEnv = "MULTI_TESTUTIL_PIDFILE"
)

// ServeRoles plays the role this process was re-executed for, if any, and
// exits; else it returns at once. A test binary that uses [StartHolder]
// or [SeenFromChild] calls it first thing in TestMain or an init.
func ServeRoles() {
	role, path := os.Getenv(roleEnv), os.Getenv(pathEnv)
	switch role {
	case "":
		return
	case "inspect":
		info, err := pidfile.Inspect(path)
		fmt.Printf("%s %d %v\n", info.State, info.PID, err)
		os.Exit(0)
	}
	n, ok := strings.CutPrefix(role, "hold")
	end, err := strconv.Atoi(n)
	if !ok || err != nil {
		fmt.Printf("error: no role %q\n", role)
		os.Exit(2)
	}
	l, err := pidfile.Acquire(path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	switch HoldEnd(end) {
	case HoldRelease:
		l.Release()
	case HoldDrop:
		l.Close()
		time.Sleep(time.Hour) // alive without the lock: killed by the test
	}
	os.Exit(0)
}

// A HoldEnd is what a holder started by [StartHolder] does once its
// standard input is closed.
type HoldEnd int

const (
	// HoldRelease removes the pidfile and lets go of the lock
	// ([pidfile.Lock.Release]), then exits.
	HoldRelease HoldEnd = iota
	// HoldCrash exits, leaving the pidfile stale, as a crash would.
	HoldCrash
	// HoldDrop lets go of the lock, leaves the file, and lives on until
	// the test's cleanup kills it.
	HoldDrop
)

// childEnv is the environment of this test binary re-executed in role:
// without the race runtime's second of sleep at exit.
func childEnv(role, path string) []string {
	return append(os.Environ(), roleEnv+"="+role, pathEnv+"="+path, "GORACE=atexit_sleep_ms=0")
}

// StartHolder starts this test binary as a process that holds the lock on
// the pidfile at path ([pidfile.Acquire]), and returns it once it holds
// it, with its standard input: closing that ends the hold as end says.
// The test's cleanup kills and reaps it, by its pid. The binary must call
// [ServeRoles].
func StartHolder(t testing.TB, path string, end HoldEnd) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = childEnv(fmt.Sprintf("hold%d", end), path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("holder of %s: %q", path, line)
	}
	return cmd, stdin
}

// SeenFromChild returns what another process sees of the lock on the
// pidfile at path, as "STATE PID ERR" from [pidfile.Inspect]: F_GETLK
// never shows a process its own lock. The binary must call [ServeRoles].
func SeenFromChild(t testing.TB, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = childEnv("inspect", path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspecting %s from a child: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}
