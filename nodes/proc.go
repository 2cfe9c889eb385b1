package nodes

// A Proc is one process (or thread) as /proc/PID/stat shows it: the fields
// multi needs, read by [ReadProc], the one place that parses that file.
type Proc struct {
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
}

// pfExiting is PF_EXITING in [Proc.Flags].
const pfExiting = 0x4

// Exiting reports whether the process has begun to exit (PF_EXITING): the
// kernel sets it before it drops the process's locks, and the process is
// a zombie moments later.
func (p Proc) Exiting() bool { return p.Flags&pfExiting != 0 }

// Gone reports whether the process has exited: a zombie or dead. A zombie
// no longer runs; only its parent's wait is missing.
func (p Proc) Gone() bool { return p.State == 'Z' || p.State == 'X' }
