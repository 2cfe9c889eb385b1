//go:build linux

package proc

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseProcOddComm(t *testing.T) {
	// A command name may hold spaces and parentheses: fields are counted
	// after the last ')'.
	line := "4242 (a) b) (c) S 7 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0\n"
	p, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, Comm: "a) b) (c", State: 'S', PPID: 7, PGID: 4242, Session: 4242, Flags: 4194560, StartTicks: 987654}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "x (y) S 7 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 5 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	p, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() || p.Gone() || p.StartTicks == 0 {
		t.Fatalf("odd self: %+v", p)
	}
	if d := time.Since(p.Start()); d < 0 || d > 24*time.Hour {
		t.Fatalf("started %s ago", d)
	}
	if _, err := Read(1<<22 + 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no such pid: %v", err)
	}
	// The kernel's answer, not this process's stat file: qemu-user (the
	// arm64 tests) fakes that one, session 0 included.
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	members, err := SessionMembers(sid)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range members {
		found = found || m.PID == os.Getpid()
	}
	if !found {
		t.Fatalf("session %d: %v lacks this process", sid, members)
	}
}

// ReadSessions, the look a stop takes for the sessions of the nodes it
// waits for, finds the same members of those sessions as ReadAll, and
// no process of another session.
func TestReadSessionsAsReadProcs(t *testing.T) {
	cmd := exec.Command("setsid", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// This process's session as the kernel says (see TestReadProcSelf).
	self, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	child := cmd.Process.Pid
	var sid int
	deadline := time.Now().Add(10 * time.Second)
	for {
		// setsid(1) execs sleep in the same process once it has its own session.
		if p, err := Read(child); err == nil && p.Session == child && p.Comm == "sleep" {
			sid = child
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not make a session of its own")
		}
		time.Sleep(time.Millisecond)
	}
	want := map[int]bool{sid: true, self: true}
	// Every process first, then the sessions: a process of this session
	// (the go command's, the other packages' tests) born between the two
	// listings is then in neither, rather than in all and not in got.
	all, err := ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadSessions(want)
	if err != nil {
		t.Fatal(err)
	}
	has := func(ps []Stat, pid int) bool {
		for _, p := range ps {
			if p.PID == pid {
				return true
			}
		}
		return false
	}
	for _, pid := range []int{child, os.Getpid()} {
		if !has(got, pid) {
			t.Errorf("ReadSessions(%v) lacks pid %d: %v", want, pid, got)
		}
	}
	for _, p := range got {
		if !want[p.Session] {
			t.Errorf("ReadSessions(%v) has pid %d of session %d", want, p.PID, p.Session)
		}
	}
	for _, p := range all {
		if want[p.Session] && !has(got, p.PID) && p.PID != os.Getpid() {
			if q, err := Read(p.PID); err == nil && !q.Gone() && want[q.Session] {
				t.Errorf("ReadSessions(%v) lacks pid %d, which ReadAll and Read find", want, p.PID)
			}
		}
	}
}

// Where /proc is not of this process's pid namespace (its "self" is not
// this process's pid: a host's /proc in a container), getsid(2), which
// answers in this namespace, is not asked: every stat file is read, and
// a member is found by its stat file.
func TestReadSessionsOfAnotherNamespacesProc(t *testing.T) {
	root := t.TempDir()
	// A pid above any pid_max: getsid answers ESRCH for it here.
	const pid = 4194305
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := strconv.Itoa(pid) + " (w1) S 1 4194305 4194305 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0\n"
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("1", filepath.Join(root, "self")); err != nil {
		t.Fatal(err)
	}
	got, err := readProcs(root, map[int]bool{pid: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PID != pid || got[0].Session != pid {
		t.Fatalf("readProcs of another namespace's /proc for session %d: %+v; want its member %d", pid, got, pid)
	}
}
