package multi

import "golang.org/x/sys/unix"

// setSubreaper makes this process a child subreaper: orphans of its
// descendants are reparented to it, not to PID 1, so that Run reaps them.
func setSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
