//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// selfNodeEnv makes the test binary, at init, a self-locking node: "own"
// owns $MULTI_PIDFILE through pidfile.OwnFromEnv; "nowrite" locks it as
// a node does but never writes its pid. Either says "up" and stays a
// minute at most.
const selfNodeEnv = "MULTI_TEST_SELF_NODE"

func init() {
	role := os.Getenv(selfNodeEnv)
	switch role {
	case "":
		return
	case "own":
		if _, err := pidfile.OwnFromEnv(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	case "nowrite":
		f, err := os.OpenFile(os.Getenv(pidfile.EnvPidfile), os.O_RDWR|os.O_CREATE, 0o600)
		if err == nil {
			err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK})
		}
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	fmt.Println("up")
	time.Sleep(time.Minute) // killed by the test long before
	os.Exit(3)
}

// selfCluster is cluster with w1 a self-locking node of the given role.
func selfCluster(t *testing.T, role string) *multi.Cluster {
	c := cluster(t, "", "w1")
	c.Nodes[0].SelfLock = true
	c.Nodes[0].Command = []string{os.Args[0], "-test.run=^$"}
	c.Env = append(os.Environ(), selfNodeEnv+"="+role, "GORACE=atexit_sleep_ms=0")
	return c
}

// A self-locking node that never locks is given up when Start's context
// ends, not at the lock timeout: the error is the context's, and the
// result names the pid that was killed.
func TestStartSelfLockHonoursContext(t *testing.T) {
	c := cluster(t, "", "w1")
	c.Nodes[0].SelfLock = true
	c.LockTimeout = 5 * time.Second // longer than the context
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := c.Start(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v; want the context's error", err)
	}
	if errors.Is(err, launch.ErrNoLock) {
		t.Fatalf("Start: %v; want no lock timeout", err)
	}
	pid := res[0].PID
	if pid <= 1 {
		t.Fatalf("Result.PID = %d; want the pid killed", pid)
	}
	// Killed and reaped by Start: the pid names no process (a recycled
	// pid this soon is not expected).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d after Start: kill 0 = %v; want ESRCH", pid, err)
	}
}

// Start of a self-locking node returns once the node holds its lock and
// the pidfile names it: a node that locks but never writes its pid is not
// reported started (and is killed), and one that does is seen at once
// with its pid in the file.
func TestStartSelfLockWaitsForPid(t *testing.T) {
	c := selfCluster(t, "nowrite")
	c.LockTimeout = time.Second
	res, err := c.Start(context.Background())
	if !errors.Is(err, launch.ErrNoLock) {
		t.Fatalf("Start of a node that writes no pid: %v (%s); want launch.ErrNoLock", err, res[0])
	}
	if res[0].PID <= 1 {
		t.Fatalf("Result.PID = %d; want the pid killed", res[0].PID)
	}

	c = selfCluster(t, "own")
	res, err = c.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	info, err := pidfile.Inspect(c.Nodes[0].PidFile)
	if err != nil || info.State != pidfile.Running || info.FilePID != info.PID || info.PID != res[0].PID {
		t.Fatalf("right after Start: %+v, %v; want locked by pid %d and naming it", info, err, res[0].PID)
	}
	if _, err := c.StopWait(context.Background(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A Start whose context is cancelled before it starts a node writes
// nothing for the node: no record, no logfile, no pidfile.
func TestStartCancelledWritesNothing(t *testing.T) {
	// Many nodes: Start's scheduler picks at random between a free slot
	// and the ended context, so each node reaches the start itself by
	// chance; with ten, one surely does.
	c := cluster(t, "", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := c.Start(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: %v; want context.Canceled", err)
	}
	for _, r := range res {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v; want context.Canceled", r.Node.Name, r.Err)
		}
		for _, f := range []string{r.Node.LogFile, r.Node.PidFile, record.Path(c.RunDir, r.Node.Name)} {
			if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s: %v; want nothing written", r.Node.Name, f, err)
			}
		}
	}
	if entries, _ := os.ReadDir(c.RunDir); len(entries) != 0 {
		t.Errorf("rundir holds %d files after a cancelled Start; want none", len(entries))
	}
}

// Two nodes with one name (two Specs joined) are refused before anything
// starts: every result fails with ErrDuplicateNode and no file is written.
func TestStartDuplicateNode(t *testing.T) {
	c := cluster(t, "", "w1", "w2")
	twice := cluster(t, "", "w1") // its own rundir: pidfiles differ
	c.Nodes = append(c.Nodes, twice.Nodes...)
	for _, verb := range []func(context.Context) ([]multi.Result, error){c.Start, restart(c), defaults(c.StopWait), defaults(c.Kill)} {
		res, err := verb(context.Background())
		if !errors.Is(err, multi.ErrDuplicateNode) {
			t.Fatalf("%v; want ErrDuplicateNode", err)
		}
		for _, r := range res {
			if !errors.Is(r.Err, multi.ErrDuplicateNode) || r.PID != 0 {
				t.Errorf("%s", r)
			}
		}
		for _, d := range []string{c.RunDir, twice.RunDir} {
			if entries, _ := os.ReadDir(d); len(entries) != 0 {
				t.Errorf("%s holds %d files; want none", d, len(entries))
			}
		}
	}
	// Two names, one pidfile.
	c = cluster(t, "", "w1", "w2")
	c.Nodes[1].PidFile = c.Nodes[0].PidFile
	if _, err := c.Start(context.Background()); !errors.Is(err, multi.ErrDuplicateNode) {
		t.Fatalf("two nodes, one pidfile: %v; want ErrDuplicateNode", err)
	}
}

// Stop and Send refuse a set that names a running node twice, as the
// other verbs do: the node is not signalled, and keeps its lock.
func TestSignalDuplicateNode(t *testing.T) {
	c := cluster(t, "", "w1")
	res, err := c.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pid := res[0].PID
	twice := &multi.Cluster{Nodes: append(c.Nodes, c.Nodes...), RunDir: c.RunDir}
	send := func(ctx context.Context) ([]multi.Result, error) {
		return twice.Send(ctx, syscall.SIGTERM, multi.StopOptions{})
	}
	for _, verb := range []func(context.Context) ([]multi.Result, error){defaults(twice.Stop), send} {
		res, err := verb(context.Background())
		if !errors.Is(err, multi.ErrDuplicateNode) {
			t.Fatalf("%v; want ErrDuplicateNode", err)
		}
		for _, r := range res {
			if !errors.Is(r.Err, multi.ErrDuplicateNode) || r.Outcome == multi.Signalled {
				t.Errorf("%s", r)
			}
		}
		if h := testutil.Holder(c.Nodes[0].PidFile); h != pid {
			t.Fatalf("lock held by %d after a refused signal; want the node, %d", h, pid)
		}
	}
}

// A pidfile folder that others can write to is refused, naming it, unless
// the Cluster accepts it (AllowSharedFolders); then the exec step and a
// node that locks its own pidfile reach it too (MULTI_SHARED_FOLDERS), and
// the record, in a rundir only root can write to, is still written.
func TestSharedPidfileFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, for a folder of root's that others can write to")
	}
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	c := selfCluster(t, "own")
	c.Nodes[0].PidFile = filepath.Join(shared, "w1.pid")
	// Through the exec step, which reports the error as text.
	want := "folder " + shared + " (owner uid 0, mode 1777) can be written by others"
	if _, err := c.Start(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Start in a shared folder: %v; want %q", err, want)
	}
	c.AllowSharedFolders = true
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatalf("Start with AllowSharedFolders: %v", err)
	}
	if info, err := pidfile.Inspect(c.Nodes[0].PidFile); err != nil || info.State != pidfile.Running {
		t.Fatalf("Inspect: %+v, %v; want running", info, err)
	}
	if _, err := record.Read(c.RunDir, "w1"); err != nil {
		t.Errorf("the record in a safe rundir: %v", err)
	}
}
