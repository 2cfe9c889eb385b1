//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// procInfo is one line of /proc/PID/stat.
type procInfo struct {
	pid, ppid int
	state     byte
	comm      string
	utime     int64 // clock ticks
	stime     int64
}

func readStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return procInfo{}, errors.New("bad stat")
	}
	f := strings.Fields(string(b[close+2:]))
	if len(f) < 13 {
		return procInfo{}, errors.New("short stat")
	}
	pi := procInfo{pid: pid, comm: string(b[open+1 : close]), state: f[0][0]}
	pi.ppid, _ = strconv.Atoi(f[1])
	pi.utime, _ = strconv.ParseInt(f[11], 10, 64)
	pi.stime, _ = strconv.ParseInt(f[12], 10, 64)
	return pi, nil
}

// allProcs reads every process's stat.
func allProcs() map[int]procInfo {
	out := map[int]procInfo{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pi, err := readStat(pid); err == nil {
			out[pid] = pi
		}
	}
	return out
}

// descendants returns the live (not zombie) processes below root.
func descendants(root int) []int {
	ps := allProcs()
	kids := map[int][]int{}
	for _, p := range ps {
		kids[p.ppid] = append(kids[p.ppid], p.pid)
	}
	var out []int
	var walk func(int)
	walk = func(pid int) {
		for _, k := range kids[pid] {
			if ps[k].state != 'Z' {
				out = append(out, k)
			}
			walk(k)
		}
	}
	walk(root)
	sort.Ints(out)
	return out
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	for _, p := range allProcs() {
		if p.ppid == pid {
			out = append(out, p.pid)
		}
	}
	sort.Ints(out)
	return out
}

// alive reports whether pid names a live process that is not a zombie.
func alive(pid int) bool {
	pi, err := readStat(pid)
	return err == nil && pi.state != 'Z' && pi.state != 'X'
}

// cpuTicks returns a process's user+system time in clock ticks.
func cpuTicks(pid int) int64 {
	pi, err := readStat(pid)
	if err != nil {
		return 0
	}
	return pi.utime + pi.stime
}

const clockTick = 100 // USER_HZ on Linux

// vmHWM returns a live process's peak RSS in KiB.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// killPids sends SIGKILL to each pid through a pidfd (so that a pid reused
// since cannot be hit), skipping those already gone.
func killPids(pids []int) {
	for _, pid := range pids {
		if pid <= 1 || pid == os.Getpid() {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	}
}

// cleanupAll kills every process below the driver, by pid, until none is
// left: a killed supervisord's programs are reparented here, and are killed
// in the next pass. It returns how many it killed.
func cleanupAll() int {
	killed := 0
	for pass := 0; pass < 100; pass++ {
		ds := descendants(os.Getpid())
		if len(ds) == 0 {
			return killed
		}
		killed += len(ds)
		killPids(ds)
		time.Sleep(20 * time.Millisecond)
	}
	return killed
}

// cpuBusy samples the machine's CPU use (all cores) over d, as a fraction.
func cpuBusy(d time.Duration) float64 {
	read := func() (idle, total uint64) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i, v := range f[1:] {
			n, _ := strconv.ParseUint(v, 10, 64)
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return
	}
	i0, t0 := read()
	time.Sleep(d)
	i1, t1 := read()
	if t1 <= t0 {
		return 0
	}
	return 1 - float64(i1-i0)/float64(t1-t0)
}
