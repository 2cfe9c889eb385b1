//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A job is one tool on one set of N nodes in a fresh folder.
type job struct {
	n    int
	dir  string   // fresh, for this run only
	node []string // the node's argv: /bin/sleep 300, or the slow node
	slow bool     // nodes take a while to stop (the cost section)
}

// started is what a tool's start left running.
type started struct {
	pids  []int
	wall  time.Duration // from the tool's start until every node is confirmed
	boot  time.Duration // a daemon's start-up before start (s6-svscan, supervisord); 0 for the others
	rss   int64         // KiB, peak of the tool's own processes
	cpu   time.Duration // of the tool's own processes
	state any           // the tool's own (supervisord, s6)
}

// stopped is what a tool's stopwait did.
type stopped struct {
	begin, end time.Time
	rss        int64
	cpu        time.Duration
}

// A tool is multi or a peer, driven the way its users drive it.
type tool struct {
	name string
	// maxN bounds N (celery workers are Python processes of ~40 MiB);
	// 0 means no bound.
	maxN   int
	rounds int // 0 means every round
	// node, if set, is the node's argv for this tool instead of the
	// section's (the readiness rows run a node that says it is ready).
	node   []string
	start  func(r *job) (*started, error)
	stop   func(r *job, s *started) (*stopped, error)
	finish func(r *job, s *started) // tears down what start set up; may be nil
}

// peerEnv is the environment of the peers: Debian's Python first, whatever
// PATH the caller has.
func peerEnv(extra ...string) []string {
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=" + os.Getenv("HOME")}
	return append(env, extra...)
}

func nodeName(i int) string { return "celery" + strconv.Itoa(i) }

// confirmPidfiles waits until each pidfile names a live process, and
// returns the pids, when that was first true, and whether it was true at
// the first look.
func confirmPidfiles(paths []string, timeout time.Duration) ([]int, time.Time, bool, error) {
	return confirmPIDs(len(paths), "pidfiles name no live process", timeout, func(i int) int {
		b, err := os.ReadFile(paths[i])
		if err != nil {
			return 0
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid
	})
}

// confirmPIDs polls pidOf(i) for i < n until each names a live process
// (pid > 1), with the same results as confirmPidfiles; what says, in the
// error, what is missing.
func confirmPIDs(n int, what string, timeout time.Duration, pidOf func(i int) int) ([]int, time.Time, bool, error) {
	deadline := time.Now().Add(timeout)
	pids := make([]int, n)
	for try := 0; ; try++ {
		ok := true
		for i := range pids {
			if pids[i] != 0 {
				continue
			}
			if pid := pidOf(i); pid > 1 && alive(pid) {
				pids[i] = pid
			} else {
				ok = false
			}
		}
		if ok {
			return pids, time.Now(), try == 0, nil
		}
		if time.Now().After(deadline) {
			missing := 0
			for _, pid := range pids {
				if pid == 0 {
					missing++
				}
			}
			return pids, time.Time{}, false, fmt.Errorf("%d of %d %s after %s", missing, n, what, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

func pidfiles(dir string, n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(dir, fmt.Sprintf(format, nodeName(i+1)))
	}
	return out
}

// confirmedWall is the start time a tool is charged: until it returned, or
// until its nodes were confirmed if that came later.
func confirmedWall(begin, returned, confirmed time.Time, firstTry bool) time.Duration {
	if firstTry || confirmed.Before(returned) {
		return returned.Sub(begin)
	}
	return confirmed.Sub(begin)
}

// multiTool is multi: `multi start N -- CMD`, then `multi stopwait`, with
// extraEnv in their environment.
func multiTool(name, bin string, startFlags, stopFlags []string, extraEnv ...string) tool {
	env := func(r *job) []string { return append(append(os.Environ(), extraEnv...), "MULTI_RUNDIR="+r.dir) }
	return tool{
		name: name,
		start: func(r *job) (*started, error) {
			argv := append(append([]string{bin, "start"}, startFlags...), strconv.Itoa(r.n), "--")
			argv = append(argv, r.node...)
			e, wall, _, err := run(argv, spawnOpts{env: env(r), capture: true, sample: true})
			if err != nil {
				return nil, err
			}
			begin := e.end.Add(-wall)
			pids, conf, first, err := confirmPidfiles(pidfiles(r.dir, r.n, "%s.pid"), 10*time.Second)
			s := &started{pids: pids, rss: e.maxRSSKiB(), cpu: e.cpu()}
			s.wall = confirmedWall(begin, e.end, conf, first)
			return s, err
		},
		stop: func(r *job, s *started) (*stopped, error) {
			argv := append([]string{bin, "stopwait"}, stopFlags...)
			e, wall, _, err := run(argv, spawnOpts{env: env(r), capture: true, sample: true})
			return &stopped{begin: e.end.Add(-wall), end: e.end, rss: e.maxRSSKiB(), cpu: e.cpu()}, err
		},
	}
}

// ssdTool is Debian's start-stop-daemon. With par 0: N sequential --start
// calls, as an init script's loop makes them. With par > 0 (the
// "start-stop-daemon -P" row): `xargs -P par -L 1 -a LIST start-stop-daemon`,
// one --start per node, par at a time, the fastest a shell script gets. Stop
// is N parallel --stop --retry calls either way.
func ssdTool(par int) tool {
	name := "start-stop-daemon"
	if par > 0 {
		name = "start-stop-daemon -P"
	}
	startArgs := func(r *job, i int, pf string) []string {
		argv := []string{"--start", "--quiet", "--background",
			"--make-pidfile", "--pidfile", pf,
			"--output", filepath.Join(r.dir, nodeName(i+1)+".log"),
			"--exec", r.node[0], "--"}
		return append(argv, r.node[1:]...)
	}
	return tool{
		name: name,
		start: func(r *job) (*started, error) {
			pfs := pidfiles(r.dir, r.n, "%s.pid")
			s := &started{}
			if par > 0 {
				// The list is the script's input, written before the clock starts.
				var b strings.Builder
				for i, pf := range pfs {
					b.WriteString(strings.Join(startArgs(r, i, pf), " ") + "\n")
				}
				list := filepath.Join(r.dir, "ssd-start.list")
				if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
					return nil, err
				}
				argv := []string{"xargs", "-P", strconv.Itoa(par), "-L", "1", "-a", list, "start-stop-daemon"}
				e, wall, _, err := run(argv, spawnOpts{env: peerEnv(), capture: true, sample: true})
				if err != nil {
					return nil, err
				}
				begin := e.end.Add(-wall)
				pids, conf, first, err := confirmPidfiles(pfs, 10*time.Second)
				s.pids, s.rss, s.cpu = pids, e.maxRSSKiB(), e.cpu()
				s.wall = confirmedWall(begin, e.end, conf, first)
				return s, err
			}
			begin := time.Now()
			var end time.Time
			for i, pf := range pfs {
				argv := append([]string{"start-stop-daemon"}, startArgs(r, i, pf)...)
				e, _, _, err := run(argv, spawnOpts{env: peerEnv(), capture: true, sample: true})
				if err != nil {
					return nil, err
				}
				s.rss = max(s.rss, e.maxRSSKiB())
				s.cpu += e.cpu()
				end = e.end
			}
			pids, conf, first, err := confirmPidfiles(pfs, 10*time.Second)
			s.pids = pids
			s.wall = confirmedWall(begin, end, conf, first)
			return s, err
		},
		stop: func(r *job, s *started) (*stopped, error) {
			pfs := pidfiles(r.dir, r.n, "%s.pid")
			st := &stopped{begin: time.Now()}
			procs := make([]*proc, 0, len(pfs))
			var firstErr error
			for i, pf := range pfs {
				// They are all alike: sample the RSS of a few.
				p, err := start([]string{"start-stop-daemon", "--stop", "--quiet",
					"--retry", "TERM/30/KILL/5", "--remove-pidfile", "--pidfile", pf},
					spawnOpts{env: peerEnv(), sample: i < 10})
				if err != nil {
					firstErr = err
					break
				}
				procs = append(procs, p)
			}
			for _, p := range procs {
				e := p.wait()
				if e.end.After(st.end) {
					st.end = e.end
				}
				st.rss = max(st.rss, e.maxRSSKiB())
				st.cpu += e.cpu()
				if err := e.err(); err != nil && firstErr == nil {
					firstErr = fmt.Errorf("start-stop-daemon --stop: %w", err)
				}
			}
			return st, firstErr
		},
	}
}

// nofile is the open-file limit supervisord will find: its minfds may not
// ask for more (it needs about 3 a program).
func nofile() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil {
		return 1024
	}
	return int(rl.Cur)
}

// supervisord: one supervisord in the foreground per run with N programs
// (startsecs=0, so that start does not wait a second for each), timed on
// `supervisorctl start all` and `supervisorctl stop all`.
type supState struct {
	daemon *proc
	conf   string
	ticks0 int64
}

func supervisordTool() tool {
	ctl := func(r *job, st *supState, args ...string) (exit, time.Duration, string, error) {
		argv := append([]string{"supervisorctl", "-c", st.conf}, args...)
		return run(argv, spawnOpts{env: peerEnv(), capture: true, sample: true})
	}
	return tool{
		name: "supervisord",
		start: func(r *job) (*started, error) {
			st := &supState{conf: filepath.Join(r.dir, "supervisord.conf")}
			var b strings.Builder
			fmt.Fprintf(&b, `[unix_http_server]
file=%[1]s/supervisor.sock

[supervisord]
nodaemon=true
logfile=%[1]s/supervisord.log
pidfile=%[1]s/supervisord.pid
childlogdir=%[1]s
minfds=%[2]d
minprocs=%[3]d

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://%[1]s/supervisor.sock

[program:celery]
command=%[4]s
process_name=%%(program_name)s%%(process_num)d
numprocs=%[5]d
numprocs_start=1
autostart=false
autorestart=false
startsecs=0
startretries=0
stopsignal=TERM
stopwaitsecs=30
redirect_stderr=true
stdout_logfile=%[1]s/%%(program_name)s%%(process_num)d.log
`, r.dir, min(4*r.n+256, nofile()), r.n+256, strings.Join(r.node, " "), r.n)
			if err := os.WriteFile(st.conf, []byte(b.String()), 0o644); err != nil {
				return nil, err
			}
			d, err := start([]string{"supervisord", "-c", st.conf}, spawnOpts{env: peerEnv()})
			if err != nil {
				return nil, err
			}
			st.daemon = d
			s := &started{state: st}
			// boot: from launching supervisord until supervisorctl answers
			// (tried again at once: one try is itself ~0.1-0.2 s of Python).
			deadline := time.Now().Add(60 * time.Second)
			for {
				if e, _, _, err := ctl(r, st, "pid"); err == nil {
					s.boot = e.end.Sub(d.begin)
					break
				}
				if time.Now().After(deadline) {
					return s, fmt.Errorf("supervisord did not come up")
				}
				time.Sleep(5 * time.Millisecond)
			}
			st.ticks0 = cpuTicks(d.pid)
			e, wall, out, err := ctl(r, st, "start", "all")
			if err != nil {
				return s, err
			}
			if n := strings.Count(out, ": started"); n != r.n {
				return s, fmt.Errorf("supervisorctl start all: %d of %d started: %s", n, r.n, lastLines(out, 3))
			}
			begin := e.end.Add(-wall)
			// Confirm: N live children of supervisord.
			var conf time.Time
			first := true
			for {
				kids := children(d.pid)
				live := kids[:0]
				for _, k := range kids {
					if alive(k) {
						live = append(live, k)
					}
				}
				if len(live) == r.n {
					s.pids, conf = live, time.Now()
					break
				}
				first = false
				if time.Now().After(deadline) {
					return s, fmt.Errorf("supervisord has %d of %d programs running", len(live), r.n)
				}
				time.Sleep(time.Millisecond)
			}
			s.wall = confirmedWall(begin, e.end, conf, first)
			s.cpu = e.cpu() + time.Duration(cpuTicks(d.pid)-st.ticks0)*time.Second/clockTick
			s.rss = max(e.maxRSSKiB(), vmHWM(d.pid))
			return s, nil
		},
		stop: func(r *job, s *started) (*stopped, error) {
			st := s.state.(*supState)
			t0 := cpuTicks(st.daemon.pid)
			e, wall, out, err := ctl(r, st, "stop", "all")
			sp := &stopped{begin: e.end.Add(-wall), end: e.end, rss: max(e.maxRSSKiB(), vmHWM(st.daemon.pid))}
			sp.cpu = e.cpu() + time.Duration(cpuTicks(st.daemon.pid)-t0)*time.Second/clockTick
			if err == nil {
				if n := strings.Count(out, ": stopped"); n != r.n {
					err = fmt.Errorf("supervisorctl stop all: %d of %d stopped: %s", n, r.n, lastLines(out, 3))
				}
			}
			return sp, err
		},
		finish: func(r *job, s *started) {
			if s == nil {
				return
			}
			st, _ := s.state.(*supState)
			if st == nil || st.daemon == nil {
				return
			}
			syscall.Kill(st.daemon.pid, syscall.SIGTERM)
			select {
			case <-st.daemon.done:
			case <-time.After(15 * time.Second):
				killPids([]int{st.daemon.pid})
				st.daemon.wait()
			}
		},
	}
}

// celeryTool is celery multi from Debian's celery package, with a worker
// app that needs no broker (memory://) and the solo pool, so that each
// node is one process.
func celeryTool(appDir string, maxN, rounds int) tool {
	args := func(r *job, verb string) []string {
		return []string{"celery", "-A", "benchapp", "multi", verb, strconv.Itoa(r.n),
			"--pidfile=" + filepath.Join(r.dir, "%n.pid"),
			"--logfile=" + filepath.Join(r.dir, "%n%I.log"),
			"-P", "solo"}
	}
	env := peerEnv("PYTHONPATH="+appDir, "PYTHONDONTWRITEBYTECODE=1")
	return tool{
		name:   "celery multi",
		maxN:   maxN,
		rounds: rounds,
		start: func(r *job) (*started, error) {
			e, wall, _, err := run(args(r, "start"), spawnOpts{env: env, capture: true, dir: r.dir, sample: true})
			if err != nil {
				return nil, err
			}
			begin := e.end.Add(-wall)
			pids, conf, first, err := confirmPidfiles(pidfiles(r.dir, r.n, "%s.pid"), 60*time.Second)
			s := &started{pids: pids, rss: e.maxRSSKiB(), cpu: e.cpu()}
			s.wall = confirmedWall(begin, e.end, conf, first)
			return s, err
		},
		stop: func(r *job, s *started) (*stopped, error) {
			e, wall, _, err := run(args(r, "stopwait"), spawnOpts{env: env, capture: true, dir: r.dir, sample: true})
			return &stopped{begin: e.end.Add(-wall), end: e.end, rss: e.maxRSSKiB(), cpu: e.cpu()}, err
		},
	}
}
