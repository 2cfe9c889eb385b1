//go:build !linux

package multi

// taskRoom would say how many more tasks this process may make; only
// Linux's limits (cgroups, RLIMIT_NPROC counted per uid) are read, so
// here none is known, and a fork refused for want of one still fails its
// node with [TaskLimitError].
func taskRoom() (room int, limit string, ok bool) { return 0, "", false }
