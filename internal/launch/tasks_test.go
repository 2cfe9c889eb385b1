package launch

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fork refused with EAGAIN or ENOMEM fails its node as a task limit,
// which callers test with errors.Is; other errors pass as they are.
func TestForkErrTaskLimit(t *testing.T) {
	for _, e := range []syscall.Errno{syscall.EAGAIN, syscall.ENOMEM} {
		err := forkErr(os.NewSyscallError("fork", e))
		var tl *TaskLimitError
		if !errors.Is(err, ErrTaskLimit) || !errors.As(err, &tl) || !errors.Is(err, e) {
			t.Errorf("forkErr(%v) = %v, want a TaskLimitError wrapping it", e, err)
		}
		if !strings.HasPrefix(err.Error(), "task limit: fork: ") {
			t.Errorf("forkErr(%v) says %q", e, err)
		}
	}
	other := os.NewSyscallError("fork", syscall.EPERM)
	if err := forkErr(other); err != other {
		t.Errorf("forkErr(EPERM) = %v, want it unchanged", err)
	}
}

// fakeRoom makes the task limits read as room tasks left under limit,
// for the test.
func fakeRoom(t *testing.T, room *int, limit string) {
	old := readTaskRoom
	readTaskRoom = func() (int, string, bool) { return *room, limit, true }
	t.Cleanup(func() { readTaskRoom = old })
}

// Under a limit a start hands out the room left, less taskSlack, and then
// refuses, naming the limit, before anything is made; a node that failed
// gives its task back, and one that runs keeps it. Without a start under
// way nothing is counted.
func TestTaskAccountRefusesWithoutRoom(t *testing.T) {
	room := 40
	fakeRoom(t, &room, "pids.max 50 of cgroup /t")
	workers, end, err := BeginTasks(10, 8)
	if err != nil {
		t.Fatal(err)
	}
	ended := false
	t.Cleanup(func() {
		if !ended {
			end()
		}
	})
	if workers != 5 { // 40/8
		t.Errorf("workers = %d, want 5", workers)
	}
	var dones []func(bool)
	for range room - taskSlack {
		done, err := tasks.take(1)
		if err != nil {
			t.Fatalf("take %d: %v", len(dones), err)
		}
		dones = append(dones, done)
	}
	// Refused, after looking again (the same room: none of the nodes has
	// forked yet, as far as the count can tell).
	_, err = tasks.take(1)
	if !errors.Is(err, ErrTaskLimit) || err.Error() != "task limit: pids.max 50 of cgroup /t reached; not started" {
		t.Fatalf("take past the room: %v", err)
	}
	tasks.mu.Lock()
	tasks.looked = time.Now().Add(time.Hour) // and not again in this test
	tasks.mu.Unlock()
	dones[0](true) // runs: keeps its task
	if _, err := tasks.take(1); !errors.Is(err, ErrTaskLimit) {
		t.Fatalf("take after a node kept its task: %v", err)
	}
	dones[1](false) // failed: gives it back
	done, err := tasks.take(1)
	if err != nil {
		t.Fatalf("take after a node gave its task back: %v", err)
	}
	done(true)
	for _, done := range dones[2:] {
		done(true)
	}
	ended = true
	end()
	if _, err := tasks.take(1000); err != nil {
		t.Errorf("take without a start under way: %v", err)
	}
}

// A room too small even for this process's own threads fails the start
// before anything is made, and leaves GOMAXPROCS as it was.
func TestBeginTasksNoRoom(t *testing.T) {
	room := 5
	fakeRoom(t, &room, "RLIMIT_NPROC (ulimit -u) 20 of uid 1000")
	_, _, err := BeginTasks(10, 8)
	var tl *TaskLimitError
	if !errors.As(err, &tl) || tl.Limit != "RLIMIT_NPROC (ulimit -u) 20 of uid 1000" {
		t.Fatalf("beginTasks = %v, want a TaskLimitError naming the limit", err)
	}
	if _, err := tasks.take(1000); err != nil {
		t.Errorf("take after a refused start: %v", err)
	}
}

// A room far larger than a start could use (systemd's default TasksMax=)
// costs nothing: no count, no threads made; a start that could fill it
// is counted.
func TestBeginTasksAmpleRoom(t *testing.T) {
	room := 4915
	fakeRoom(t, &room, "pids.max 4915 of cgroup /t")
	workers, end, err := BeginTasks(200, 8)
	if err != nil || workers != 8 {
		t.Fatalf("beginTasks(200) = %d, %v; want 8 workers", workers, err)
	}
	if _, err := tasks.take(10000); err != nil {
		t.Errorf("counted a start with ample room: %v", err)
	}
	end()
	_, end, err = BeginTasks(2000, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	if _, err := tasks.take(10000); !errors.Is(err, ErrTaskLimit) {
		t.Errorf("a start of 2000 nodes in a room of 4915 is not counted: %v", err)
	}
}
