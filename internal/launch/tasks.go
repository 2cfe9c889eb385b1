package launch

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ErrTaskLimit: a node was not started because no task (process or
// thread) could be made for it: the user's RLIMIT_NPROC (ulimit -u), the
// cgroup's pids.max (systemd's TasksMax=, docker --pids-limit) or the
// kernel refused one. See [TaskLimitError].
//
// Under such a limit, when a start could fill it, Start, Restart and Run
// start fewer nodes at once, make the threads they need before any node
// (the Go runtime aborts the process when it cannot make one), and lower
// GOMAXPROCS while they start nodes; then they put it back.
var ErrTaskLimit = errors.New("task limit")

// A TaskLimitError reports a node not started for want of a task: either
// refused beforehand, the limit's room being used up, or the fork failed
// (Err: EAGAIN or ENOMEM). Nothing of the node is left: no pidfile, no
// record of this start.
type TaskLimitError struct {
	// Limit names the limit that is reached, as "pids.max 25 of cgroup
	// /x" or "RLIMIT_NPROC 150 of uid 1000"; "" when none is known.
	Limit string
	// Err is the fork's error; nil when the node was refused beforehand.
	Err error
}

func (e *TaskLimitError) Error() string {
	if e.Err == nil {
		return "task limit: " + e.Limit + " reached; not started"
	}
	s := "task limit: " + e.Err.Error()
	if e.Limit != "" {
		s += " (" + e.Limit + " reached)"
	}
	return s + "; not started"
}

// Is makes errors.Is(err, ErrTaskLimit) true.
func (e *TaskLimitError) Is(target error) bool { return target == ErrTaskLimit }

// Unwrap returns the fork's error.
func (e *TaskLimitError) Unwrap() error { return e.Err }

// forkErr is err, from a fork, as a [TaskLimitError] when the kernel had
// no task to give (EAGAIN: a limit; ENOMEM: no pid or memory for one).
func forkErr(err error) error {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) {
		room, limit, ok := readTaskRoom()
		if !ok || room > taskSlack {
			limit = "" // no limit of ours is near: the kernel's own
		}
		return &TaskLimitError{Limit: limit, Err: err}
	}
	return err
}

// hintRoom: with fewer tasks left than this when a node exited at once,
// the limit is named as the likely reason.
const hintRoom = 16

// withLimitHint adds to err, a node that exited at once, the task limit
// that had little room left when it did: the likely reason, when the
// node's own threads or children could not be made (a Go node dies with
// "fatal error: newosproc", its log ending in a stack).
func withLimitHint(err error) error {
	if err == nil || !errors.Is(err, ErrExitedAtOnce) {
		return err
	}
	room, limit, ok := readTaskRoom()
	if !ok || room >= hintRoom {
		return err
	}
	left := fmt.Sprintf("%d tasks were", room)
	if room == 1 {
		left = "1 task was"
	}
	return fmt.Errorf("%w; only %s left under the %s: it may have found none to make", err, left, limit)
}

// The Go runtime aborts the whole process ("fatal error: newosproc") when
// it cannot make a thread it wants, and a start that forks nodes up to a
// task limit takes the tasks the runtime would want. So while a limit
// applies, a start makes beforehand every thread it can need (they stay,
// idle, for the runtime to reuse) and counts each node's tasks against the
// room left; a node without room fails with [TaskLimitError].
const (
	// stepTasks is what one start through the exec step can hold at
	// once: the step is a Go program (GOMAXPROCS=1; seen with three
	// threads natively) until it execs. Under qemu-user each step also
	// has the emulator's own thread and, its system calls being slower,
	// more threads of the runtime's: a budget of 4 let steps die there
	// making a thread (TestTaskLimitNproc, 1 run in 3).
	stepTasks = 8
	// taskSlack is room never handed to nodes: for a count that is a
	// moment old, and for what the kernel counts that multi does not.
	taskSlack = 2
	// threadSlack is how many goroutines of this process besides the
	// start workers may be in a system call at once, each holding a
	// thread.
	threadSlack = 3
)

// readTaskRoom is [taskRoom]; the tests set their own limit.
var readTaskRoom = taskRoom

// tasks is this process's account of the tasks it may still make, while
// a start is under way under a limit. Limits are the process's (its
// user's, its cgroup's), so one account serves every Cluster.
var tasks taskAccount

type taskAccount struct {
	mu       sync.Mutex
	users    int    // starts under way under a limit
	room     int    // tasks this process may still make, taskSlack kept back
	inflight int    // taken by starts not yet over
	limit    string // the limit nearest to be reached
	looked   time.Time
	procs    int // GOMAXPROCS before the first start under way lowered it
}

// remeasureEvery is how often a start that finds no room left looks again.
const remeasureEvery = 100 * time.Millisecond

// ampleRoom is room enough that a start of n nodes with need threads of
// its own needs neither count nor threads made beforehand (systemd's
// default TasksMax=, say): whatever the nodes take, and a few hundred
// tasks their own children may make meanwhile, leave room.
func ampleRoom(n, need int) int { return n*stepTasks + 2*need + 256 }

// BeginTasks readies a start of n nodes for the task limits that apply to
// this process, if any: it lowers workers (and GOMAXPROCS, until end) so
// that this process's own threads take a small share of the room, and
// makes those threads now. It fails, changing nothing, when not even they
// fit.
func BeginTasks(n, workers int) (int, func(), error) {
	room, limit, ok := readTaskRoom()
	if !ok || room >= ampleRoom(n, runtime.GOMAXPROCS(0)+workers+threadSlack) {
		return workers, func() {}, nil
	}
	procs := runtime.GOMAXPROCS(0)
	capProcs := max(1, min(procs, room/16))
	workers = max(1, min(workers, room/8))
	need := capProcs + workers + threadSlack // threads that may run at once
	// At most need threads more (the threads there are may all be busy),
	// and the template thread that LockOSThread starts; and room for one
	// node at least.
	if room-need-1 <= taskSlack {
		return 0, nil, &TaskLimitError{Limit: limit}
	}
	tasks.mu.Lock()
	if tasks.users == 0 {
		tasks.procs = procs // put back by the last start to end
	}
	tasks.users++
	if capProcs < procs {
		runtime.GOMAXPROCS(capProcs)
	}
	tasks.mu.Unlock()
	reserveThreads(need)
	room, limit, _ = readTaskRoom()
	tasks.mu.Lock()
	tasks.room, tasks.limit = room-taskSlack-tasks.inflight, limit
	tasks.mu.Unlock()
	return workers, func() {
		tasks.mu.Lock()
		defer tasks.mu.Unlock()
		if tasks.users--; tasks.users == 0 && runtime.GOMAXPROCS(0) != tasks.procs {
			runtime.GOMAXPROCS(tasks.procs)
		}
	}, nil
}

// reserveThreads makes the runtime hold at least n threads, idle once it
// returns: n goroutines each locked to a thread of its own, all at once.
// The runtime keeps idle threads and reuses them rather than make more.
func reserveThreads(n int) {
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			release.Wait()
		}()
	}
	ready.Wait()
	release.Done()
}

// take counts k tasks that a start is about to make against the room
// left, if a limit applies; when the room is used up it looks again (nodes
// that failed gave theirs back) and fails if there is still none. The
// start then calls done, saying whether its node runs (and so keeps one
// task).
func (a *taskAccount) take(k int) (done func(kept bool), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.users == 0 {
		return func(bool) {}, nil
	}
	if a.room < k {
		// Counting a user's tasks reads all of /proc: not again for every
		// node refused.
		if time.Since(a.looked) > remeasureEvery {
			if room, limit, ok := readTaskRoom(); ok {
				a.room, a.limit = room-taskSlack-a.inflight, limit
			}
			a.looked = time.Now()
		}
		if a.room < k {
			return nil, &TaskLimitError{Limit: a.limit}
		}
	}
	a.room -= k
	a.inflight += k
	return func(kept bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.inflight -= k
		a.room += k
		if kept {
			a.room--
		}
	}, nil
}
