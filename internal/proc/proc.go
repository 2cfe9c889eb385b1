// Package proc is multi's one reader of /proc/PID/stat: a process's
// state, parent, session, flags and start time ([Stat]), read for one
// process ([Read]), for every process ([ReadAll]) or for the members of
// some sessions ([ReadSessions]); and the clock and the pid namespace
// that those start times and pids are of ([NowTicks], [PidNamespace]).
// Only Linux has /proc: elsewhere every read fails with
// [errors.ErrUnsupported].
package proc

// A Stat is one process (or thread) as /proc/PID/stat shows it: the fields
// multi needs, read by [Read], the one place that parses that file.
type Stat struct {
	PID  int
	Comm string // the command name, without its parentheses
	// State is the state letter: R, S, D, T, t, Z (zombie), X (dead), ...
	State byte
	PPID  int
	PGID  int
	// Session is the session id: a node's own pid, since it starts a new
	// session, for every process it forks that does not leave it.
	Session int
	// Flags are the kernel's flags (PF_EXITING is 0x4).
	Flags uint64
	// StartTicks is when the process started, in clock ticks since boot:
	// with PID, it names one process for the life of the machine, since a
	// recycled pid has a later start.
	StartTicks uint64
	// ExitCode is a zombie's exit status, in the form wait(2) reports
	// it (Linux 3.5+); 0 while the process runs.
	ExitCode int
}

// pfExiting is PF_EXITING in [Stat.Flags].
const pfExiting = 0x4

// Exiting reports whether the process has begun to exit (PF_EXITING): the
// kernel sets it before it drops the process's locks, and the process is
// a zombie moments later.
func (p Stat) Exiting() bool { return p.Flags&pfExiting != 0 }

// Gone reports whether the process has exited: a zombie or dead. A zombie
// no longer runs; only its parent's wait is missing.
func (p Stat) Gone() bool { return p.State == 'Z' || p.State == 'X' }
