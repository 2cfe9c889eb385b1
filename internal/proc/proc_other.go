//go:build !linux

package proc

import (
	"errors"
	"time"
)

// Read reads process pid; only Linux says, through /proc.
func Read(pid int) (Stat, error) { return Stat{}, errors.ErrUnsupported }

// ReadAt reads a stat file in the format of Linux's /proc/PID/stat;
// only Linux has them.
func ReadAt(path string) (Stat, error) { return Stat{}, errors.ErrUnsupported }

// Start returns when the process started; only Linux says.
func (p Stat) Start() time.Time { return time.Time{} }

// PidNamespace returns this process's pid namespace; only Linux says (0).
func PidNamespace() uint64 { return 0 }

// NowTicks returns the time since boot in the unit of [Stat.StartTicks];
// only Linux says (0).
func NowTicks() uint64 { return 0 }

// StartTime returns when process pid started; only Linux says, through
// /proc.
func StartTime(pid int) (time.Time, error) { return time.Time{}, errors.ErrUnsupported }

// SessionMembers returns the processes of session sid; only Linux says.
func SessionMembers(sid int) ([]Stat, error) { return nil, errors.ErrUnsupported }

// ReadAll returns every live process; only Linux says.
func ReadAll() ([]Stat, error) { return nil, errors.ErrUnsupported }

// ReadSessions is Linux's.
func ReadSessions(want map[int]bool) ([]Stat, error) { return nil, errors.ErrUnsupported }
