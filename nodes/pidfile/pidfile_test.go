package pidfile_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The test binary plays a pidfile holder when started with this variable
// set to a pidfile path: it acquires the pidfile, prints "locked", and
// holds the lock until its stdin closes.
const holderEnv = "NODES_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holderEnv); path != "" {
		l, err := pidfile.Acquire(path)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder starts a process that holds path's lock and returns it once the
// lock is taken. The test's cleanup kills and reaps it.
func holder(t *testing.T, path string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+path)
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
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("holder: %q", line)
	}
	return cmd, stdin
}

func TestLockLifecycle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "w1.pid")

	info, err := pidfile.Inspect(path)
	if err != nil || info.State != pidfile.Absent {
		t.Fatalf("before: %+v, %v; want Absent", info, err)
	}
	cmd, stdin := holder(t, path)
	pid := cmd.Process.Pid

	info, err = pidfile.Inspect(path)
	if err != nil || info.State != pidfile.Running || info.PID != pid || info.FilePID != pid || info.Mismatch() {
		t.Fatalf("held: %+v, %v; want Running with pid %d", info, err, pid)
	}
	// A second owner is refused with the holder's pid, and changes nothing.
	_, err = pidfile.Acquire(path)
	var held *pidfile.HeldError
	if !errors.As(err, &held) || held.PID != pid || !errors.Is(err, pidfile.ErrAlreadyRunning) {
		t.Fatalf("second Acquire: %v; want HeldError with pid %d", err, pid)
	}
	if err := pidfile.RemoveStale(path); !errors.Is(err, pidfile.ErrAlreadyRunning) {
		t.Fatalf("RemoveStale of a held pidfile: %v; want ErrAlreadyRunning", err)
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(pid)+"\n" {
		t.Fatalf("pidfile now says %q; want %d", b, pid)
	}

	// A clean exit removes the pidfile.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Release: %v; want no pidfile", err)
	}
}

func TestLockDiesWithHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w1.pid")
	cmd, _ := holder(t, path)
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The lock goes as the process exits, and the kernel says so though we,
	// its parent, have not reaped it: it becomes a zombie that kill(pid, 0)
	// would call alive, and its pidfile stays stale.
	info := waitState(t, path, pidfile.Stale)
	if info.FilePID != pid {
		t.Fatalf("after SIGKILL: %+v; want the text to still name %d", info, pid)
	}
	// The last thread out drops the lock, and the process turns zombie a
	// moment later; nobody but this test can reap it.
	pollUntil(t, fmt.Sprintf("pid %d to be a zombie", pid), func() bool { return isZombie(t, pid) })
	if err := signalZero(pid); err != nil {
		t.Fatalf("kill(%d, 0) on the zombie: %v; want success, the trap lock-based liveness avoids", pid, err)
	}
	if info, _ := pidfile.Inspect(path); info.State != pidfile.Stale {
		t.Fatalf("zombie's pidfile: %v; want stale", info.State)
	}
	if err := pidfile.RemoveStale(path); err != nil {
		t.Fatal(err)
	}
	if info, _ := pidfile.Inspect(path); info.State != pidfile.Absent {
		t.Fatalf("after RemoveStale: %v; want Absent", info.State)
	}
	// And it can be owned again.
	l, err := pidfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := pidfile.Inspect(path); info.State != pidfile.Running || info.PID != os.Getpid() {
		t.Fatalf("own lock: %+v", info)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// waitState polls path until it is in state want.
func waitState(t *testing.T, path string, want pidfile.State) pidfile.Info {
	t.Helper()
	var info pidfile.Info
	pollUntil(t, fmt.Sprintf("%s to be %v", path, want), func() bool {
		var err error
		info, err = pidfile.Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.State == want
	})
	return info
}

// isZombie reports whether pid is a zombie, through /proc.
func isZombie(t *testing.T, pid int) bool {
	p, err := nodes.ReadProc(pid)
	if err != nil {
		t.Skip("no /proc here")
	}
	return p.State == 'Z'
}

func TestStaleTextIsNeverTrusted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A pidfile naming this very process, unlocked: stale, whatever it says.
	path := filepath.Join(dir, "w1.pid")
	os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	info, err := pidfile.Inspect(path)
	if err != nil || info.State != pidfile.Stale || info.PID != 0 {
		t.Fatalf("%+v, %v; want Stale with no holder", info, err)
	}
}

func TestHostilePidfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep\n"), 0o644)

	link := filepath.Join(dir, "link.pid")
	os.Symlink(target, link)
	sub := filepath.Join(dir, "dir.pid")
	os.Mkdir(sub, 0o755)
	fifo := filepath.Join(dir, "fifo.pid")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, sub, fifo} {
		if _, err := pidfile.Inspect(path); !errors.Is(err, pidfile.ErrBadPidfile) {
			t.Errorf("Inspect(%s): %v; want ErrBadPidfile", filepath.Base(path), err)
		}
		if _, err := pidfile.Acquire(path); !errors.Is(err, pidfile.ErrBadPidfile) {
			t.Errorf("Acquire(%s): %v; want ErrBadPidfile", filepath.Base(path), err)
		}
		if err := pidfile.RemoveStale(path); !errors.Is(err, pidfile.ErrBadPidfile) {
			t.Errorf("RemoveStale(%s): %v; want ErrBadPidfile", filepath.Base(path), err)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("%s was removed", filepath.Base(path))
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("symlink target written through: %q", b)
	}
}
