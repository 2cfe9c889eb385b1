package pidfile_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

func TestMain(m *testing.M) {
	testutil.ServeRoles() // the holders of testutil.StartHolder
	os.Exit(m.Run())
}

func TestLockLifecycle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "w1.pid")

	info, err := pidfile.Inspect(path)
	if err != nil || info.State != pidfile.Absent {
		t.Fatalf("before: %+v, %v; want Absent", info, err)
	}
	cmd, stdin := testutil.StartHolder(t, path, testutil.HoldRelease)
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
	cmd, _ := testutil.StartHolder(t, path, testutil.HoldRelease)
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
	p, err := proc.Read(pid)
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

// RemoveIfStale removes through the open handle only a pidfile nobody
// holds, and only while the path still names the handle's file: a file
// locked since the handle was opened stays, and a file put in its place is
// left to RemoveStale, which removes it only if it is stale.
func TestRemoveIfStale(t *testing.T) {
	t.Parallel()
	t.Run("alone", func(t *testing.T) { testRemoveIfStale(t, pidfile.OpenToRemove) })
	t.Run("folders", func(t *testing.T) {
		fo := pidfile.NewFolders()
		defer fo.Close()
		testRemoveIfStale(t, fo.OpenToRemove)
	})
}

// testRemoveIfStale is TestRemoveIfStale with openRW as OpenToRemove.
func testRemoveIfStale(t *testing.T, openRW func(string) (*pidfile.Handle, error)) {
	dir := t.TempDir()
	stale := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("4194000\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	exists := func(path string) bool {
		_, err := os.Lstat(path)
		return err == nil
	}

	// Stale: removed through the handle, opened for writing or not.
	for _, open := range []func(string) (*pidfile.Handle, error){openRW, pidfile.Open} {
		path := stale("stale.pid")
		h, err := open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.RemoveIfStale(); err != nil || exists(path) {
			t.Fatalf("RemoveIfStale of a stale pidfile: %v, exists %v; want removed", err, exists(path))
		}
		h.Close()
	}

	// Locked since the handle was opened (same file): kept, with its pid.
	path := stale("held.pid")
	h, err := openRW(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cmd, _ := testutil.StartHolder(t, path, testutil.HoldRelease)
	var held *pidfile.HeldError
	if err := h.RemoveIfStale(); !errors.As(err, &held) || held.PID != cmd.Process.Pid {
		t.Fatalf("RemoveIfStale of a held pidfile: %v; want HeldError with pid %d", err, cmd.Process.Pid)
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(cmd.Process.Pid)+"\n" {
		t.Fatalf("held pidfile now says %q; want %d", b, cmd.Process.Pid)
	}

	// Replaced by a stale file since the handle was opened: the new file
	// is removed (it is stale), as RemoveStale would.
	path = stale("replaced.pid")
	h2, err := openRW(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if err := os.Rename(stale("new.pid"), path); err != nil {
		t.Fatal(err)
	}
	if err := h2.RemoveIfStale(); err != nil || exists(path) {
		t.Fatalf("RemoveIfStale of a replaced stale pidfile: %v, exists %v; want removed", err, exists(path))
	}

	// Replaced by a held file: kept.
	path = stale("replaced2.pid")
	h3, err := openRW(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h3.Close()
	other := filepath.Join(dir, "other.pid")
	cmd2, _ := testutil.StartHolder(t, other, testutil.HoldRelease)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if err := h3.RemoveIfStale(); !errors.As(err, &held) || held.PID != cmd2.Process.Pid || !exists(path) {
		t.Fatalf("RemoveIfStale of a replaced held pidfile: %v, exists %v; want HeldError with pid %d", err, exists(path), cmd2.Process.Pid)
	}
}

// A pidfile opened through Folders is removed in the folder it was opened
// in, even once that folder's path names another folder (here through a
// link the test's user made, which a walk would trust): the stale file
// there is not touched.
func TestFoldersRemoveInFolderOpened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, moved, other := filepath.Join(dir, "run"), filepath.Join(dir, "moved"), filepath.Join(dir, "other")
	for _, d := range []string{run, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "a.pid"), []byte("4194000\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fo := pidfile.NewFolders()
	h, err := fo.OpenToRemove(filepath.Join(run, "a.pid"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	fo.Close() // the handle keeps its folder open
	if err := os.Rename(run, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, run); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveIfStale(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(other, "a.pid")); err != nil {
		t.Fatalf("the stale pidfile in the folder the path names now was removed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(moved, "a.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the pidfile opened was not removed from its folder: %v", err)
	}
}
