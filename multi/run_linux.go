package multi

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// setSubreaper makes this process a child subreaper: orphans of its
// descendants are reparented to it, not to PID 1, so that Run reaps them.
// restore puts back what it was before: a library caller that was not a
// subreaper must not be one after Run, with nobody reaping what it adopts.
func setSubreaper() (restore func(), err error) {
	var was int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0); err != nil {
		return func() {}, err
	}
	if was != 0 {
		return func() {}, nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return func() {}, err
	}
	return func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }, nil
}
