//go:build !linux

package nodes

import (
	"errors"
	"time"
)

// ProcessStart returns when process pid started; only Linux says, through
// /proc.
func ProcessStart(pid int) (time.Time, error) { return time.Time{}, errors.ErrUnsupported }
