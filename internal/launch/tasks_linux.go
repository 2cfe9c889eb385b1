package launch

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// taskRoom is how many more tasks (processes or threads) this process
// may make before a limit refuses one, and that limit: the pids.max of
// its cgroup or of one above it (cgroup v1 pids controller, or cgroup
// v2), RLIMIT_NPROC, which counts every task of the real uid and which
// root and a holder of CAP_SYS_RESOURCE or CAP_SYS_ADMIN are spared, or
// nine tenths of the machine's kernel.pid_max and kernel.threads-max.
// ok is false when no limit applies.
func taskRoom() (room int, limit string, ok bool) {
	room = math.MaxInt
	take := func(r int, l string) {
		if r < room {
			room, limit, ok = max(r, 0), l, true
		}
	}
	if r, l, found := cgroupRoom(); found {
		take(r, l)
	}
	// The machine's own bounds, which root meets too: a start does not
	// take the last pids (kernel.pid_max) or tasks (kernel.threads-max);
	// a tenth of each is kept for everything else.
	if total := systemTasks(); total < math.MaxInt32 {
		for _, k := range []string{"pid_max", "threads-max"} {
			if v, err := strconv.Atoi(readTrim("/proc/sys/kernel/" + k)); err == nil && v > 0 {
				take(v-v/10-total, fmt.Sprintf("nine tenths of kernel.%s %d (the rest kept for the system)", k, v))
			}
		}
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur < math.MaxInt32 && !nprocExempt() {
		uid := os.Getuid()
		l := fmt.Sprintf("RLIMIT_NPROC (ulimit -u) %d of uid %d", rl.Cur, uid)
		// Counting the uid's tasks reads all of /proc; the tasks of the
		// whole system, one small file, bound them, and usually leave
		// room enough that the count is not needed.
		if r := int(rl.Cur) - systemTasks(); r >= nprocFar {
			take(r, l)
		} else {
			take(int(rl.Cur)-tasksOfUID(uid), l)
		}
	}
	return room, limit, ok
}

// cgroupRoom is the least room left by the pids.max of this process's
// cgroups, v1 and v2, and of every cgroup above them.
func cgroupRoom() (room int, limit string, ok bool) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, "", false
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0, "", false
	}
	room = math.MaxInt
	for line := range strings.Lines(string(self)) {
		// hierarchy-ID:controllers:path; v2 is "0::path".
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		v2 := parts[0] == "0" && parts[1] == ""
		if !v2 && !slices.Contains(strings.Split(parts[1], ","), "pids") {
			continue
		}
		mnt, root := cgroupMount(mounts, v2)
		rel, found := strings.CutPrefix(parts[2], root)
		if mnt == "" || !found {
			continue
		}
		for dir := filepath.Join(mnt, rel); ; dir = filepath.Dir(dir) {
			if r, ok := pidsRoom(dir); ok && r < room {
				room = r
				name := "/" + strings.TrimPrefix(strings.TrimPrefix(dir, mnt), "/")
				limit = fmt.Sprintf("pids.max %s of cgroup %s", readTrim(filepath.Join(dir, "pids.max")), name)
			}
			if len(dir) <= len(mnt) {
				break
			}
		}
	}
	return room, limit, room != math.MaxInt
}

// pidsRoom is pids.max less pids.current in the cgroup folder dir; ok is
// false without a limit there ("max", or no such files: the root).
func pidsRoom(dir string) (int, bool) {
	most, err := strconv.Atoi(readTrim(filepath.Join(dir, "pids.max")))
	if err != nil {
		return 0, false
	}
	cur, err := strconv.Atoi(readTrim(filepath.Join(dir, "pids.current")))
	if err != nil {
		return 0, false
	}
	return most - cur, true
}

// cgroupMount is where the cgroup v2 hierarchy (v2) or the v1 one with
// the pids controller is mounted, and the cgroup path at its root.
func cgroupMount(mountinfo []byte, v2 bool) (mnt, root string) {
	for line := range strings.Lines(string(mountinfo)) {
		// ID parent major:minor root mountpoint opts... - fstype source superopts
		pre, post, found := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 3 {
			continue
		}
		if v2 && g[0] == "cgroup2" || !v2 && g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), "pids") {
			return unescapeMount(f[4]), unescapeMount(f[3])
		}
	}
	return "", ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// nprocExempt: the kernel lets this process fork past RLIMIT_NPROC: uid
// 0 of the first user namespace, or CAP_SYS_RESOURCE or CAP_SYS_ADMIN
// there.
func nprocExempt() bool {
	if m, err := os.ReadFile("/proc/self/uid_map"); err != nil || len(strings.Fields(string(m))) != 3 || strings.Fields(string(m))[2] != "4294967295" {
		return false // a user namespace of its own: capabilities there do not count
	}
	if os.Getuid() == 0 {
		return true
	}
	caps, ok := statusField("/proc/self/status", "CapEff")
	if !ok {
		return false
	}
	eff, err := strconv.ParseUint(caps, 16, 64)
	return err == nil && eff&(1<<unix.CAP_SYS_RESOURCE|1<<unix.CAP_SYS_ADMIN) != 0
}

// nprocFar is room under RLIMIT_NPROC that needs no exact count.
const nprocFar = 1024

// systemTasks is how many tasks the system has (the fourth field of
// /proc/loadavg, "running/total"); a large number if unknown.
func systemTasks() int {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) > 3 {
		if _, total, ok := strings.Cut(f[3], "/"); ok {
			if n, err := strconv.Atoi(total); err == nil {
				return n
			}
		}
	}
	return math.MaxInt32
}

// tasksOfUID counts the tasks (threads) whose real uid is uid, which
// RLIMIT_NPROC limits.
func tasksOfUID(uid int) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	want := strconv.Itoa(uid)
	n := 0
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/status")
		if err != nil {
			continue
		}
		uids, _ := fieldOf(b, "Uid")
		if f := strings.Fields(uids); len(f) == 0 || f[0] != want {
			continue
		}
		threads, _ := fieldOf(b, "Threads")
		if t, err := strconv.Atoi(threads); err == nil {
			n += t
		}
	}
	return n
}

// statusField is the value of one "Key:\tvalue" line of a
// /proc/PID/status file.
func statusField(path, key string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return fieldOf(b, key)
}

func fieldOf(b []byte, key string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// readTrim is the text of a small file, trimmed; "" if it cannot be read.
func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
