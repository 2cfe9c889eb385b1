package multi_test

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The "needs" role is a node that proves the order of After as it sees
// it, in the file $MULTI_TEST_ORDER, one line appended at a time: at its
// start it checks that the pidfiles in $MULTI_TEST_NEEDS are held (and
// the files in $MULTI_TEST_SEE exist), and appends "start NAME", or
// "NAME: PATH not held" and exits 1; it then makes $MULTI_TEST_READY, or
// exits with $MULTI_TEST_EXIT. At SIGTERM it checks that no pidfile in
// $MULTI_TEST_USERS (the nodes that need it) is held, appends
// "stop NAME" (or "NAME: stopped while PATH held") and exits 0.
const (
	orderEnv = "MULTI_TEST_ORDER"
	needsEnv = "MULTI_TEST_NEEDS"
	seeEnv   = "MULTI_TEST_SEE"
	readyEnv = "MULTI_TEST_READY"
	exitEnv  = "MULTI_TEST_EXIT"
	usersEnv = "MULTI_TEST_USERS"
)

func needsNode() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	name := os.Getenv("MULTI_TEST_NAME")
	say := func(line string) {
		f, err := os.OpenFile(os.Getenv(orderEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Fprintln(f, line) // one write: lines of nodes never mix
		f.Close()
	}
	held := func(path string) bool {
		info, err := pidfile.Inspect(path)
		return err == nil && info.State == pidfile.Running
	}
	for _, p := range filepath.SplitList(os.Getenv(needsEnv)) {
		if !held(p) {
			say(name + ": " + p + " not held")
			os.Exit(1)
		}
	}
	for _, p := range filepath.SplitList(os.Getenv(seeEnv)) {
		if _, err := os.Stat(p); err != nil {
			say(name + ": " + p + " not there")
			os.Exit(1)
		}
	}
	say("start " + name)
	if code := os.Getenv(exitEnv); code != "" {
		n, _ := strconv.Atoi(code)
		os.Exit(n)
	}
	if p := os.Getenv(readyEnv); p != "" {
		os.WriteFile(p, nil, 0o644)
	}
	fmt.Println("up")
	select {
	case <-sigs:
		for _, p := range filepath.SplitList(os.Getenv(usersEnv)) {
			if held(p) {
				say(name + ": stopped while " + p + " held")
				os.Exit(0)
			}
		}
		say("stop " + name)
		os.Exit(0)
	case <-time.After(time.Minute):
		os.Exit(3)
	}
}

// needsCluster is a cluster of "needs" nodes, each with its name and the
// shared order file in its environment.
func needsCluster(t *testing.T, names ...string) (*multi.Cluster, string) {
	t.Helper()
	c := cluster(t, "needs", names...)
	order := filepath.Join(c.RunDir, "order")
	for i := range c.Nodes {
		c.Nodes[i].Env = []string{"MULTI_TEST_NAME=" + c.Nodes[i].Name, orderEnv + "=" + order}
	}
	return c, order
}

// need makes node i of c need the nodes at needs (by name or group), as
// cond; the nodes it names by their index, checks at its start that they
// hold their pidfiles, and they check at their stop that it is gone.
func need(c *multi.Cluster, i int, name string, cond nodes.Condition, check ...int) {
	c.Nodes[i].After = append(c.Nodes[i].After, nodes.Need{Name: name, Cond: cond})
	for _, j := range check {
		addEnvPath(&c.Nodes[i], needsEnv, c.Nodes[j].PidFile)
		addEnvPath(&c.Nodes[j], usersEnv, c.Nodes[i].PidFile)
	}
}

// addEnvPath adds path to the list in n's key.
func addEnvPath(n *nodes.Node, key, path string) {
	for k, kv := range n.Env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			n.Env[k] = key + "=" + v + string(filepath.ListSeparator) + path
			return
		}
	}
	n.Env = append(n.Env, key+"="+path)
}

// orderLines are the lines of the order file.
func orderLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// waitLines waits, up to a deadline, until the order file holds n lines
// (a node writes its line after its exec, which may come after Start has
// seen it hold its lock: under an emulator, long after), and returns them.
func waitLines(t *testing.T, path string, n int) []string {
	t.Helper()
	var lines []string
	pollUntil(t, fmt.Sprintf("%d lines in %s", n, path), func() bool {
		lines = orderLines(t, path)
		return len(lines) >= n
	})
	return lines
}

// allStarts reports whether every line says a node started: none found
// what it needs not held.
func allStarts(lines []string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(l, "start_") {
			return false
		}
	}
	return true
}

// before reports whether line a comes before line b in lines, both there.
func before(lines []string, a, b string) bool {
	i, j := slices.Index(lines, a), slices.Index(lines, b)
	return i >= 0 && j >= 0 && i < j
}

// db; web1 and web2, group web, need db ready (db's check a file it
// makes); api needs the group web started. They start in that order and
// stop in the reverse one, each seeing what it needs held at its start,
// and none of its users held at its stop.
func TestAfterStartStopOrder(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "db", "web1", "web2", "api")
	readyFile := filepath.Join(c.RunDir, "db.ready")
	c.Nodes[0].Ready = nodes.ReadyCheck{Kind: nodes.File, Target: readyFile}
	c.Nodes[0].Env = append(c.Nodes[0].Env, readyEnv+"="+readyFile)
	for _, i := range []int{1, 2} {
		c.Nodes[i].Group = "web"
		need(c, i, "db", nodes.AfterReady, 0)
		c.Nodes[i].Env = append(c.Nodes[i].Env, seeEnv+"="+readyFile)
	}
	need(c, 3, "web", nodes.AfterStarted, 1, 2)

	res, err := c.Start(t.Context())
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, orderLines(t, order))
	}
	for _, r := range res {
		if r.Outcome != multi.Started || r.Exit != nil {
			t.Errorf("%q", r)
		}
	}
	// web1 and web2 wait for db's ready file, which db makes after its
	// line; api's check that web1 and web2 hold their locks at its start
	// is the proof of its order (their lines may come after its own).
	lines := waitLines(t, order, 4)
	if len(lines) != 4 || !allStarts(lines) || !before(lines, "start_db", "start_web1") || !before(lines, "start_db", "start_web2") {
		t.Errorf("start order %q; want db, then web1 and web2, and api seeing them held", lines)
	}
	waitUp(t, c.Nodes...)

	// Started again: each is running (and db ready), nothing new.
	res, err = c.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != multi.AlreadyRunning {
			t.Errorf("again: %q", r)
		}
	}

	res, err = c.StopWait(t.Context(), multi.StopOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != multi.Stopped {
			t.Errorf("stopwait: %q", r)
		}
	}
	lines = orderLines(t, order)[4:]
	if len(lines) != 4 || !before(lines, "stop_api", "stop_web1") || !before(lines, "stop_api", "stop_web2") ||
		!before(lines, "stop_web1", "stop_db") || !before(lines, "stop_web2", "stop_db") {
		t.Errorf("stop order %q; want api, web1 and web2, db", lines)
	}
}

// A restart stops in the reverse order, and starts in the order.
func TestAfterRestartOrder(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "web", "db")
	need(c, 0, "db", nodes.AfterStarted, 1)
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUp(t, c.Nodes...)
	res, err := c.Restart(t.Context(), multi.RestartOptions{Stop: multi.StopOptions{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != multi.Restarted {
			t.Errorf("%q", r)
		}
	}
	// Each start line comes after the node's exec, which may be after a
	// node it needs began: web's check that db holds its lock proves
	// that order; the stops write before they exit, in order.
	lines := waitLines(t, order, 6)
	if len(lines) != 6 || !allStarts(lines[:2]) || !allStarts(lines[4:]) || !slices.Equal(lines[2:4], []string{"stop_web", "stop_db"}) {
		t.Errorf("order %q; want the starts, stop_web, stop_db, the starts", lines)
	}
	waitUp(t, c.Nodes...)
	if _, err := c.Kill(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A cycle is refused, naming its path, before anything starts, or is
// signalled.
func TestAfterCycle(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "w1", "db", "w2")
	need(c, 0, "db", nodes.AfterStarted)
	need(c, 1, "w1", nodes.AfterReady)
	res, err := c.Start(t.Context())
	if !errors.Is(err, multi.ErrNeedGraph) || errors.Is(err, multi.ErrNeedUnmet) {
		t.Fatalf("Start: %v; want ErrNeedGraph", err)
	}
	var ne *multi.NodeError
	if !errors.As(err, &ne) || ne.Op != "start" {
		t.Errorf("%v: want a *NodeError of start", err)
	}
	for _, r := range res {
		if r.Outcome != multi.Failed || r.PID != 0 || !strings.Contains(r.String(), "w1 -> db -> w1") {
			t.Errorf("%q: want FAILED, naming the cycle w1 -> db -> w1", r)
		}
		if _, err := os.Lstat(r.Node.PidFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: pidfile %v", r.Node.Name, err)
		}
		if _, err := record.Read(c.RunDir, r.Node.Name); err == nil {
			t.Errorf("%s recorded", r.Node.Name)
		}
	}
	if lines := orderLines(t, order); len(lines) != 0 {
		t.Errorf("started: %q", lines)
	}
	// w2, outside the cycle, started alone, runs; a stop of the set
	// signals nothing.
	w2, _ := c.Only("w2")
	if _, err := w2.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUp(t, c.Nodes[2])
	for name, stop := range map[string]func() ([]multi.Result, error){
		"stop":     func() ([]multi.Result, error) { return c.Stop(t.Context(), multi.StopOptions{}) },
		"stopwait": func() ([]multi.Result, error) { return c.StopWait(t.Context(), multi.StopOptions{}) },
		"kill":     func() ([]multi.Result, error) { return c.Kill(t.Context(), multi.StopOptions{}) },
	} {
		res, err := stop()
		if !errors.Is(err, multi.ErrNeedGraph) || res[2].Outcome != multi.Failed {
			t.Errorf("%s: %v, %q", name, err, res[2])
		}
		if got := holderOf(t, c.Nodes[2]); got <= 0 {
			t.Errorf("%s: w2 not running", name)
		}
	}
	if _, err := w2.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A need naming no node of the set is the node of that name recorded,
// running; one neither in the set nor recorded is refused.
func TestAfterOutside(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "web", "db")
	need(c, 0, "db", nodes.AfterStarted)
	web, _ := c.Only("web")
	res, err := web.Start(t.Context())
	if !errors.Is(err, multi.ErrNeedGraph) || res[0].String() != "web: FAILED: web: needs db, which is neither in this set nor recorded; nothing done" {
		t.Fatalf("Start: %q, %v", res[0], err)
	}
	if lines := orderLines(t, order); len(lines) != 0 {
		t.Errorf("started: %q", lines)
	}

	// db, recorded and running: web starts.
	db, _ := c.Only("db")
	if _, err := db.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res, err := web.Start(t.Context()); err != nil || res[0].Outcome != multi.Started {
		t.Fatalf("Start with db running: %q, %v", res[0], err)
	}
	// db stopped alone (web is not of its set): web, running, is left be.
	if _, err := db.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := web.Start(t.Context()); err != nil || res[0].Outcome != multi.AlreadyRunning {
		t.Fatalf("Start with web running, db stopped: %q, %v", res[0], err)
	}
	// db recorded, stopped: web is not started.
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = web.Start(t.Context())
	if !errors.Is(err, multi.ErrNeedUnmet) || res[0].String() != "web: FAILED: not started: needs db (started), which is stopped" {
		t.Fatalf("Start with db stopped: %q, %v", res[0], err)
	}
	if info, _ := pidfile.Inspect(c.Nodes[0].PidFile); info.State != pidfile.Absent {
		t.Errorf("web: %v", info.State)
	}
}

// A node whose command fails in its settle window leaves the nodes that
// need it, one after another, not started, each saying why.
func TestAfterFailedNeed(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "api", "web", "db", "other")
	// A native sh, not this binary: under an emulator a Go program takes
	// longer to start than the settle window it must fail within.
	c.Nodes[2].Command = []string{"sh", "-c", "exit 1"}
	need(c, 1, "db", nodes.AfterReady)
	need(c, 0, "web", nodes.AfterStarted)
	res, err := c.Start(t.Context())
	if !errors.Is(err, multi.ErrNeedUnmet) || !errors.Is(err, multi.ErrExitedAtOnce) {
		t.Fatalf("Start: %v", err)
	}
	want := []string{
		"api: FAILED: not started: needs web (started), which needs db (ready), which FAILED",
		"web: FAILED: not started: needs db (ready), which FAILED",
	}
	for i, w := range want {
		if res[i].String() != w || res[i].PID != 0 || !errors.Is(res[i].Err, multi.ErrNeedUnmet) {
			t.Errorf("%q; want %q", res[i], w)
		}
	}
	if res[2].Outcome != multi.Failed || res[2].Exit == nil || res[2].Exit.Code != 1 {
		t.Errorf("db: %q", res[2])
	}
	if res[3].Outcome != multi.Started {
		t.Errorf("other: %q", res[3])
	}
	waitUp(t, c.Nodes[3]) // its line is written before it says up
	if lines := orderLines(t, order); !slices.Equal(lines, []string{"start_other"}) {
		t.Errorf("started: %q; want other alone (db is a sh that exits 1)", lines)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A node needed done runs to its end before the nodes that need it
// start: exit 0 lets them start; exit 3 fails them.
func TestAfterDone(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 3} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			c, order := needsCluster(t, "web", "migrate")
			c.Nodes[1].Env = append(c.Nodes[1].Env, exitEnv+"="+strconv.Itoa(code))
			need(c, 0, "migrate", nodes.AfterDone)
			res, err := c.Start(t.Context())
			m, web := res[1], res[0]
			if _, err := os.Lstat(c.Nodes[1].PidFile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("migrate's pidfile: %v; want removed", err)
			}
			sts, _ := c.Status(t.Context())
			if sts[1].State != multi.StateStopped {
				t.Errorf("migrate's status: %s", sts[1])
			}
			if _, err := record.Read(c.RunDir, "migrate"); err != nil {
				t.Errorf("migrate's record: %v", err)
			}
			if code == 3 {
				if !errors.Is(err, multi.ErrNeedUnmet) || m.Outcome != multi.Failed || m.Exit == nil || m.Exit.Code != 3 || m.PID <= 0 {
					t.Fatalf("Start: %v; migrate %q", err, m)
				}
				if web.String() != "web: FAILED: not started: needs migrate (done), which FAILED" {
					t.Errorf("%q", web)
				}
				if lines := orderLines(t, order); !slices.Equal(lines, []string{"start_migrate"}) {
					t.Errorf("order %q", lines)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Outcome != multi.Started || m.Exit == nil || m.Exit.Code != 0 || m.String() != fmt.Sprintf("migrate: started (pid %d), exited 0", m.PID) {
				t.Errorf("migrate: %q", m)
			}
			if web.Outcome != multi.Started {
				t.Errorf("web: %q", web)
			}
			if lines := waitLines(t, order, 2); !slices.Equal(lines, []string{"start_migrate", "start_web"}) {
				t.Errorf("order %q", lines)
			}
			// Run again at the next start: web runs, migrate does not.
			res, err = c.Start(t.Context())
			if err != nil || res[1].Outcome != multi.Started || res[1].Exit == nil || res[0].Outcome != multi.AlreadyRunning {
				t.Errorf("again: %q, %v", res, err)
			}
			waitUp(t, c.Nodes[0])
			if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A node needed done that does not end within the ready timeout is
// stopped, and fails the nodes that need it.
func TestAfterDoneTooLong(t *testing.T) {
	t.Parallel()
	c, order := needsCluster(t, "web", "migrate")
	c.ReadyTimeout = 100 * time.Millisecond
	need(c, 0, "migrate", nodes.AfterDone)
	res, err := c.Start(t.Context())
	if !errors.Is(err, multi.ErrNeedUnmet) || res[1].Outcome != multi.Failed || !strings.Contains(res[1].String(), "migrate: FAILED: still running after 100ms; stopped it (pid ") {
		t.Fatalf("Start: %v; %q", err, res[1])
	}
	if info, _ := pidfile.Inspect(c.Nodes[1].PidFile); info.State != pidfile.Absent {
		t.Errorf("migrate: %v", info.State)
	}
	if lines := orderLines(t, order); slices.Contains(lines, "start_web") {
		t.Errorf("order %q: web started", lines)
	}
}

// A node needed done that ends before its start sees it hold its lock
// (here a self-locking one that never takes it) has ended all the same,
// its pid said: exit 0 lets the nodes that need it start; exit 3 fails
// them.
func TestAfterDoneFast(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 3} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			c, order := needsCluster(t, "web", "migrate")
			c.Nodes[1].Command = []string{"sh", "-c", fmt.Sprintf(`echo start_migrate >>"$%s"; exit %d`, orderEnv, code)}
			c.Nodes[1].SelfLock = true
			need(c, 0, "migrate", nodes.AfterDone)
			res, err := c.Start(t.Context())
			m, web := res[1], res[0]
			if m.Exit == nil || m.Exit.Code != code {
				t.Fatalf("migrate: %q, exit %v", m, m.Exit)
			}
			if sts, _ := c.Status(t.Context()); sts[1].State != multi.StateStopped {
				t.Errorf("migrate's status: %s", sts[1])
			}
			if code == 3 {
				if !errors.Is(err, multi.ErrNeedUnmet) || m.Outcome != multi.Failed || web.String() != "web: FAILED: not started: needs migrate (done), which FAILED" {
					t.Errorf("Start: %v; %q", err, web)
				}
				return
			}
			if err != nil || m.Outcome != multi.Started || web.Outcome != multi.Started || m.PID <= 0 || m.String() != fmt.Sprintf("migrate: started (pid %d), exited 0", m.PID) {
				t.Fatalf("Start: %v; %q, %q", err, m, web)
			}
			if lines := waitLines(t, order, 2); !slices.Equal(lines, []string{"start_migrate", "start_web"}) {
				t.Errorf("order %q", lines)
			}
			waitUp(t, c.Nodes[0])
			if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
