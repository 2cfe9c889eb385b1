package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// Read reads process pid from /proc/PID/stat. The error wraps
// [fs.ErrNotExist] when there is no such process.
func Read(pid int) (Stat, error) {
	return ReadAt("/proc/" + strconv.Itoa(pid) + "/stat")
}

// ReadAt reads a stat file at path, in the format of /proc/PID/stat:
// /proc/PID/task/TID/stat for one thread, say.
func ReadAt(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	p, err := parseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

var errOddStat = errors.New("odd /proc stat")

// parseStat parses the text of a /proc/PID/stat file.
func parseStat(b []byte) (Stat, error) {
	var p Stat
	// pid (comm) state ppid pgrp session tty_nr tpgid flags ... starttime:
	// the command name is in parentheses and may hold anything, spaces and
	// parentheses included, so the fields are counted after the last ')'.
	open := bytes.IndexByte(b, '(')
	i := bytes.LastIndexByte(b, ')')
	if open < 1 || i < open {
		return p, errOddStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return p, errOddStat
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return p, errOddStat
	}
	p.PID, p.Comm, p.State = pid, string(b[open+1:i]), f[0][0]
	ints := []*int{&p.PPID, &p.PGID, &p.Session}
	for k, dst := range ints {
		if *dst, err = strconv.Atoi(string(f[1+k])); err != nil {
			return Stat{}, errOddStat
		}
	}
	if p.Flags, err = strconv.ParseUint(string(f[6]), 10, 64); err != nil {
		return Stat{}, errOddStat
	}
	if p.StartTicks, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return Stat{}, errOddStat
	}
	if len(f) > 49 {
		// Field 52, exit_code; older kernels end before it.
		p.ExitCode, _ = strconv.Atoi(string(f[49]))
	}
	return p, nil
}

// Start returns when the process started, from StartTicks and the time
// since boot; the zero time if the clock cannot be read.
func (p Stat) Start() time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Time{}
	}
	sinceBoot := time.Duration(ts.Nano())
	started := time.Duration(p.StartTicks) * time.Second / clockTicks
	return time.Now().Add(started - sinceBoot)
}

// PidNamespace returns the inode number of this process's pid namespace:
// a pid is a number in one namespace, and a record names the one its pid
// is of. 0 if /proc does not say.
func PidNamespace() uint64 {
	pidNSOnce.Do(func() {
		var st unix.Stat_t
		if unix.Stat("/proc/self/ns/pid", &st) == nil {
			pidNS = st.Ino
		}
	})
	return pidNS
}

var (
	pidNSOnce sync.Once
	pidNS     uint64
)

// NowTicks returns the time since boot in the unit of
// [Stat.StartTicks]: a process whose StartTicks is below it had started by
// now. 0 if the clock cannot be read.
func NowTicks() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return uint64(time.Duration(ts.Nano()) * clockTicks / time.Second)
}

// StartTime returns when process pid started, from /proc/PID/stat and
// the boot time; status uses it for uptime.
func StartTime(pid int) (time.Time, error) {
	p, err := Read(pid)
	if err != nil {
		return time.Time{}, err
	}
	return p.Start(), nil
}

// SessionMembers returns the live processes (not zombies) of session sid,
// found by scanning /proc, ordered by pid.
func SessionMembers(sid int) ([]Stat, error) {
	all, err := ReadAll()
	if err != nil {
		return nil, err
	}
	var out []Stat
	for _, p := range all {
		if p.Session == sid {
			out = append(out, p)
		}
	}
	return out, nil
}

// ReadAll returns every live process (not a zombie) that /proc lists,
// ordered by pid: one look, in which a caller finds the members of many
// sessions.
func ReadAll() ([]Stat, error) {
	return readProcs("/proc", nil)
}

// ReadSessions returns the live processes (not zombies) of the sessions
// want holds, ordered by pid: one look at /proc, as [ReadAll] takes it,
// in which the kernel is asked each listed process's session (getsid)
// and only a member's stat file is read. Where /proc is not of this
// process's pid namespace, every stat file is read.
func ReadSessions(want map[int]bool) ([]Stat, error) {
	return readProcs("/proc", want)
}

// readProcs is ReadAll of the proc filesystem at root, of the sessions
// in want (nil: every process).
func readProcs(root string, want map[int]bool) ([]Stat, error) {
	dfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	d := os.NewFile(uintptr(dfd), root)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	// getsid answers in this process's pid namespace: only where /proc
	// numbers processes as it does.
	ask := want != nil && procIsOurs(int(d.Fd()))
	buf := make([]byte, 1024)
	out := make([]Stat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if ask {
			sid, err := unix.Getsid(pid)
			if err == unix.ESRCH {
				continue // gone since the listing
			}
			if err == nil && !want[sid] {
				continue
			}
		}
		p, err := readStatAt(int(d.Fd()), name, buf)
		if err != nil || p.Gone() || want != nil && !want[p.Session] {
			continue // gone since the listing
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Stat) int { return a.PID - b.PID })
	return out, nil
}

// readStatAt reads PID/stat in the /proc open at dirfd, into buf (grown
// if the file is longer): plain system calls, no os.File per process.
func readStatAt(dirfd int, pid string, buf []byte) (Stat, error) {
	fd, err := unix.Openat(dirfd, pid+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, err
		}
		if m <= 0 {
			break
		}
		if n += m; n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
	return parseStat(buf[:n])
}

// procIsOurs reports whether the /proc open at dirfd numbers processes as
// this process's pid namespace does: its "self" is this process's pid.
func procIsOurs(dirfd int) bool {
	b := make([]byte, 32)
	n, err := unix.Readlinkat(dirfd, "self", b)
	return err == nil && string(b[:n]) == strconv.Itoa(os.Getpid())
}
