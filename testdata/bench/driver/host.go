//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// raiseLimits raises the open-file limit for the driver and everything it
// starts (supervisord wants ~4 descriptors a program, multi ~2 a node), and
// returns the limits in force, for the report.
func raiseLimits(maxN int) string {
	var rl unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	want := uint64(8*maxN + 4096)
	if rl.Max < want {
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if nr, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && want > nr {
				want = nr
			}
		}
		nl := unix.Rlimit{Cur: want, Max: want}
		if unix.Setrlimit(unix.RLIMIT_NOFILE, &nl) == nil {
			rl = nl
		}
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		unix.Setrlimit(unix.RLIMIT_NOFILE, &rl)
	}
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	var np unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NPROC, &np)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "?"
		}
		return strings.TrimSpace(string(b))
	}
	pidsMax := read("/sys/fs/cgroup/pids.max")
	if pidsMax == "?" {
		pidsMax = read("/sys/fs/cgroup/pids/pids.max")
	}
	return fmt.Sprintf("RLIMIT_NOFILE %d (soft and hard, as far as the driver could raise them), RLIMIT_NPROC %d, kernel.pid_max %s, kernel.threads-max %s, cgroup pids.max %s",
		rl.Cur, np.Cur, read("/proc/sys/kernel/pid_max"), read("/proc/sys/kernel/threads-max"), pidsMax)
}

func baseDir(dir string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
		if fsType("/dev/shm") == "tmpfs" {
			dir = "/dev/shm"
		}
	}
	return os.MkdirTemp(dir, "multi-bench-")
}

func fsType(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "?"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	}
	return fmt.Sprintf("fs %#x", st.Type)
}

func numCPU() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		return set.Count()
	}
	return 0
}

func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:])
}
