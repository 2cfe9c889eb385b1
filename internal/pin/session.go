package pin

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// Members returns, of procs (one look at /proc, [proc.ReadAll]), the
// processes of the session of the node whose process st names: the node
// starts a session of its own (its exec step calls setsid), so its
// session id is st.PID. A session id stays allocated while any member
// lives, but once they are all gone the number can be another process's,
// which may make a session of its own; so a process counts only if
// [SessionIsNodes] (the number names st's process, or no process at all)
// and it started no earlier than st did. A process that left the session
// (setsid of its own) is not found. Never pid 1 or below, never this
// process. A record names a pid as the pid namespace of the multi that
// started the node sees it, and records do not say which namespace that
// was: a rundir shared with another pid namespace should be looked at
// only from the one its nodes started in.
func Members(procs []proc.Stat, st nodes.Started) []proc.Stat {
	var out []proc.Stat
	for _, p := range procs {
		if isMember(p, st) {
			out = append(out, p)
		}
	}
	// Looked at after the processes: a session made under a reused
	// number since then has a leader that is not st's process.
	if len(out) == 0 || !SessionIsNodes(st) {
		return nil
	}
	return out
}

// isMember reports whether p, as /proc showed it, belongs to the session
// of st's node.
func isMember(p proc.Stat, st nodes.Started) bool {
	if st.PID <= 1 || st.StartTicks == 0 || p.PID <= 1 || p.PID == os.Getpid() || p.Gone() {
		return false
	}
	if p.Session != st.PID || p.StartTicks < st.StartTicks {
		return false
	}
	// The leader itself only as st's process.
	return p.PID != st.PID || p.StartTicks == st.StartTicks
}

// SessionIsNodes reports whether session id st.PID still names the
// session st's process made: the pid names that process (alive, or a
// zombie its parent has not reaped), or no process at all (the leader is
// gone, and the kernel does not reuse a number its members still hold).
func SessionIsNodes(st nodes.Started) bool {
	if st.PID <= 1 || st.StartTicks == 0 {
		return false
	}
	p, err := proc.Read(st.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || p.StartTicks != st.StartTicks {
		return false
	}
	if st.PidfdIno != 0 {
		if ino, ok := PidfdInoOf(st.PID); ok && ino != st.PidfdIno {
			return false
		}
	}
	return true
}

// KillSession SIGKILLs what is left of the session of st's process (its
// leader gone by now, or not: see [Members]), read from /proc now, each
// member pinned and checked again first ([SignalMember]). It returns
// those it killed; none where /proc cannot say (off Linux).
func KillSession(st nodes.Started) []proc.Stat {
	procs, err := proc.ReadSessions(map[int]bool{st.PID: true})
	if err != nil {
		return nil
	}
	var killed []proc.Stat
	for _, m := range Members(procs, st) {
		if ok, _ := SignalMember(m, st, syscall.SIGKILL); ok {
			killed = append(killed, m)
		}
	}
	return killed
}
