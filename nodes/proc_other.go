//go:build !linux

package nodes

import (
	"errors"
	"time"
)

// ReadProc reads process pid; only Linux says, through /proc.
func ReadProc(pid int) (Proc, error) { return Proc{}, errors.ErrUnsupported }

// ReadProcAt reads a stat file in the format of Linux's /proc/PID/stat;
// only Linux has them.
func ReadProcAt(path string) (Proc, error) { return Proc{}, errors.ErrUnsupported }

// Start returns when the process started; only Linux says.
func (p Proc) Start() time.Time { return time.Time{} }

// PidNamespace returns this process's pid namespace; only Linux says (0).
func PidNamespace() uint64 { return 0 }

// NowTicks returns the time since boot in the unit of [Proc.StartTicks];
// only Linux says (0).
func NowTicks() uint64 { return 0 }

// ProcessStart returns when process pid started; only Linux says, through
// /proc.
func ProcessStart(pid int) (time.Time, error) { return time.Time{}, errors.ErrUnsupported }

// SessionMembers returns the processes of session sid; only Linux says.
func SessionMembers(sid int) ([]Proc, error) { return nil, errors.ErrUnsupported }

// ReadProcs returns every live process; only Linux says.
func ReadProcs() ([]Proc, error) { return nil, errors.ErrUnsupported }

// ReadSessions is Linux's.
func ReadSessions(want map[int]bool) ([]Proc, error) { return nil, errors.ErrUnsupported }
