//go:build unix && !linux

package multi

import "errors"

// setSubreaper: only Linux has child subreapers (FreeBSD's procctl
// PROC_REAP_ACQUIRE is not used): orphans go to PID 1 as usual.
func setSubreaper() (restore func(), err error) { return func() {}, errors.ErrUnsupported }
