//go:build linux

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// s6 (Debian's s6 package): one s6-svscan per run, in the background under
// the driver, on a scan directory that is always on a tmpfs (s6 keeps its
// supervision state there: fifos, locks, status files). Each node is a
// service directory whose run script execs the node with its output
// appended to a log file in the folder under test, as the other tools do.
//
//   - boot: from launching s6-svscan until its control fifo has a reader
//     (what s6-svscanctl needs); reported apart, like supervisord's daemon.
//   - start: from creating the N service directories until every service
//     is up, as s6-supervise reports it. s6-svlisten cannot do that wait: it
//     reads each service's supervise/status first and fails ("unable to
//     s6_svstatus_read") when no s6-supervise runs yet, which is the case
//     for new services. So start subscribes to each service's event fifodir,
//     created with the service directory before any supervisor exists (as
//     s6-svlink and s6-rc do), with s6-ftrig-listen, and triggers the scan
//     under it: `s6-ftrig-listen -a { SVC/event u ... } s6-svscanctl -a SCAN`.
//     Debian's s6 does not pull in execline, so the block is passed in the
//     argv form s6-svlisten documents outside execline (each word prefixed
//     with a space, then ""). No polling, one scan for all N services.
//   - stopwait: `s6-svlisten -d SVC... "" xargs -P 2×CPUs -n 1 -a LIST
//     s6-svc -d`: s6-svc takes one service directory, so the N calls run in
//     parallel, the fastest a shell gets; s6-svlisten returns when every
//     service is down (its process dead and reaped by s6-supervise). Not
//     -D, which waits for a finish script as well (these services have
//     none): at N=1000 it took 4.7-5.6 s against 1.4-1.6 s for -d, on
//     the same (busy) machine.
//
// s6Timeout bounds s6's listeners (milliseconds): a run that goes wrong
// fails instead of hanging.
const s6Timeout = "120000"

type s6State struct {
	scan   string // the scan directory (tmpfs)
	svscan *proc
	svcs   []string
	list   string // the service directories, one a line, for xargs
	ticks0 int64
}

// s6Tool is s6; with ready, "s6 notification-fd": each service directory
// has a notification-fd file (3), its node writes a line there when ready
// (see readyNode), and start waits for every service to be up and ready
// (event U instead of u).
func s6Tool(scanBase string, par int, ready bool) tool {
	name, event := "s6", " u"
	if ready {
		name, event = "s6 notification-fd", " U"
	}
	return tool{
		name: name,
		start: func(r *job) (*started, error) {
			st := &s6State{scan: filepath.Join(scanBase, filepath.Base(r.dir))}
			s := &started{state: st}
			if err := os.MkdirAll(st.scan, 0o755); err != nil {
				return s, err
			}
			launched := time.Now()
			// -c: s6-svscan supervises at most 500 services by default (it
			// ignores the rest, and the listener would wait for ever).
			d, err := start([]string{"s6-svscan", "-c", strconv.Itoa(r.n + 100), st.scan}, spawnOpts{env: peerEnv(), sample: true})
			if err != nil {
				return s, err
			}
			st.svscan = d
			if err := waitFifoReader(filepath.Join(st.scan, ".s6-svscan", "control"), 30*time.Second); err != nil {
				return s, fmt.Errorf("s6-svscan did not come up: %w", err)
			}
			s.boot = time.Since(launched)
			st.ticks0 = cpuTicks(d.pid)

			// The timed part: the service directories, then the scan.
			begin := time.Now()
			argv := []string{"s6-ftrig-listen", "-a", "-t", s6Timeout}
			st.svcs = make([]string, r.n)
			for i := range st.svcs {
				name := nodeName(i + 1)
				svc := filepath.Join(st.scan, name)
				st.svcs[i] = svc
				if err := os.Mkdir(svc, 0o755); err != nil {
					return s, err
				}
				run := fmt.Sprintf("#!/bin/sh\nexec %s >>%s 2>&1\n", shellJoin(r.node), filepath.Join(r.dir, name+".log"))
				if err := os.WriteFile(filepath.Join(svc, "run"), []byte(run), 0o755); err != nil {
					return s, err
				}
				if ready {
					if err := os.WriteFile(filepath.Join(svc, "notification-fd"), []byte("3\n"), 0o644); err != nil {
						return s, err
					}
				}
				if err := mkFifodir(filepath.Join(svc, "event")); err != nil {
					return s, err
				}
				argv = append(argv, " "+svc+"/event", event)
			}
			argv = append(argv, "", "s6-svscanctl", "-a", st.scan)
			e, _, _, err := run(argv, spawnOpts{env: peerEnv(), capture: true, sample: true})
			if err != nil {
				return s, err
			}
			returned := e.end
			pids, conf, first, err := confirmS6(st.svcs, 10*time.Second)
			s.pids = pids
			s.wall = confirmedWall(begin, returned, conf, first)
			s.cpu = e.cpu() + ticksDur(cpuTicks(d.pid)-st.ticks0)
			s.rss = max(e.maxRSSKiB(), vmHWM(d.pid))
			if err != nil {
				return s, err
			}
			st.list = filepath.Join(st.scan, ".services")
			return s, os.WriteFile(st.list, []byte(strings.Join(st.svcs, "\n")+"\n"), 0o644)
		},
		stop: func(r *job, s *started) (*stopped, error) {
			st := s.state.(*s6State)
			sup := children(st.svscan.pid)
			t0 := cpuTicks(st.svscan.pid) + ticksOf(sup)
			argv := append([]string{"s6-svlisten", "-d", "-t", s6Timeout}, st.svcs...)
			argv = append(argv, "", "xargs", "-P", strconv.Itoa(par), "-n", "1", "-a", st.list, "s6-svc", "-d")
			e, wall, _, err := run(argv, spawnOpts{env: peerEnv(), capture: true, sample: true})
			sp := &stopped{begin: e.end.Add(-wall), end: e.end, rss: max(e.maxRSSKiB(), vmHWM(st.svscan.pid))}
			// The waiting is s6-svlisten's and each s6-supervise's.
			sp.cpu = e.cpu() + ticksDur(cpuTicks(st.svscan.pid)+ticksOf(sup)-t0)
			return sp, err
		},
		finish: func(r *job, s *started) {
			if s == nil {
				return
			}
			st, _ := s.state.(*s6State)
			if st == nil {
				return
			}
			if st.svscan != nil {
				// s6-svscan and every s6-supervise, by pid; the supervisors
				// are then reparented to the driver and reaped there.
				sup := descendants(st.svscan.pid)
				killPids(append([]int{st.svscan.pid}, sup...))
				st.svscan.wait()
				waitGone(sup, 10*time.Second)
			}
			os.RemoveAll(st.scan)
		},
	}
}

// mkFifodir makes a fifodir as s6-mkfifodir does (public: mode 1733), so
// that a listener can subscribe before s6-supervise exists.
func mkFifodir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	return os.Chmod(path, os.ModeSticky|0o733)
}

// waitFifoReader waits until a fifo has a reader: opening it for writing
// without blocking fails with ENXIO (or ENOENT) until then.
func waitFifoReader(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			return nil
		}
		if !errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no reader after %s", path, timeout)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// confirmS6 reads each service's supervise/status (s6 2.11: the pid is a
// big-endian uint64 at byte 24) until each names a live process.
func confirmS6(svcs []string, timeout time.Duration) ([]int, time.Time, bool, error) {
	return confirmPIDs(len(svcs), "s6 services not up", timeout, func(i int) int {
		b, err := os.ReadFile(filepath.Join(svcs[i], "supervise", "status"))
		if err != nil || len(b) < 32 {
			return 0
		}
		return int(binary.BigEndian.Uint64(b[24:32]))
	})
}

// waitGone waits until none of pids is alive (the reaper has them).
func waitGone(pids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// ticksOf sums the CPU ticks of live processes.
func ticksOf(pids []int) int64 {
	var t int64
	for _, pid := range pids {
		t += cpuTicks(pid)
	}
	return t
}

func ticksDur(t int64) time.Duration { return time.Duration(t) * time.Second / clockTick }

// shellJoin quotes argv for sh.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
