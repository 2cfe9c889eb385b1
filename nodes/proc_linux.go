package nodes

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ProcessStart returns when process pid started, from /proc/PID/stat and
// the boot time; status uses it for uptime.
func ProcessStart(pid int) (time.Time, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return time.Time{}, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold anything: state is field 3, starttime field 22.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return time.Time{}, errors.New("nodes: odd /proc stat")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return time.Time{}, errors.New("nodes: odd /proc stat")
	}
	ticks, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Time{}, err
	}
	sinceBoot := time.Duration(ts.Nano())
	started := time.Duration(ticks) * time.Second / clockTicks
	return time.Now().Add(started - sinceBoot), nil
}
