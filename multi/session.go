package multi

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// inSession reports whether n's tree is its session: no cgroup recorded,
// and a kill mode that reaches past the lock holder.
func inSession(n nodes.Node) bool {
	return n.Cgroup == "" && n.KillMode != cgroup.Process
}

// procScan is one look at /proc: every process, ordered by pid, and the
// same by session id, so that a node's members are found without a walk
// over every process for each node.
type procScan struct {
	all      []proc.Stat
	sessions map[int][]proc.Stat
}

func newProcScan(ps []proc.Stat) *procScan {
	s := &procScan{all: ps, sessions: make(map[int][]proc.Stat)}
	for _, p := range ps {
		s.sessions[p.Session] = append(s.sessions[p.Session], p)
	}
	return s
}

// procs returns one look at /proc begun no earlier than since: the nodes
// of one call share it, as many nodes ended at once look at once.
func (c *call) procs(since time.Time) (*procScan, error) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if c.scanned != nil && !c.scanAt.Before(since) {
		return c.scanned, nil
	}
	at, ticks := time.Now(), proc.NowTicks()
	ps, err := proc.ReadAll()
	if err != nil {
		return nil, err
	}
	c.scanAt, c.scanTicks, c.scanned = at, ticks, newProcScan(ps)
	return c.scanned, nil
}

// procsAfter returns a look at /proc that began after st's process had
// started and in which that process was no longer alive (gone, or a
// zombie): then its session's members were all in it, and none can join
// a session left empty (but for a child forked in the moment between the
// look's listing and its read of the process's own entry). The last look
// serves when it is one: the nodes a start finds down, stopped before it
// began, share it.
func (c *call) procsAfter(st nodes.Started) (*procScan, error) {
	c.scanMu.Lock()
	scan, ticks := c.scanned, c.scanTicks
	c.scanMu.Unlock()
	if scan != nil && ticks > st.StartTicks && st.StartTicks != 0 {
		_, live := slices.BinarySearchFunc(scan.all, st.PID, func(p proc.Stat, pid int) int { return p.PID - pid })
		if !live {
			return scan, nil
		}
	}
	return c.procs(time.Now())
}

// session returns the members of n's session as a look at /proc begun no
// earlier than since shows them (see [pin.Members]; the zero since: as
// procsAfter finds them), and the process n's record names, whose pid is
// the session's id: none without one.
func (c *call) session(n nodes.Node, since time.Time) ([]proc.Stat, nodes.Started, error) {
	st := c.recordedProcess(n)
	if st.PID == 0 {
		return nil, st, nil
	}
	var scan *procScan
	var err error
	if since.IsZero() {
		scan, err = c.procsAfter(st)
	} else {
		scan, err = c.procs(since)
	}
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, st, nil // no /proc: the lock holder alone
	}
	if err != nil {
		return nil, st, err
	}
	return pin.Members(scan.sessions[st.PID], st), st, nil
}

// sessionTree is what n's session holds, as a look at /proc begun no
// earlier than since shows it.
func (c *call) sessionTree(n nodes.Node, since time.Time) (cgroup.Tree, error) {
	ms, _, err := c.session(n, since)
	t := cgroup.Tree{Populated: len(ms) > 0}
	for _, m := range ms {
		t.Procs = append(t.Procs, m.PID)
	}
	return t, err
}

// signalSession sends sig to every member of n's session but its leader
// (the lock holder, signalled through its lock only), each pinned and
// checked again first ([pin.SignalMember]). It returns the pids it
// signalled.
func (c *call) signalSession(n nodes.Node, sig syscall.Signal) ([]int, error) {
	ms, st, err := c.session(n, time.Now())
	if err != nil {
		return nil, err
	}
	var done []int
	var errs []error
	for _, m := range ms {
		if m.PID == st.PID {
			continue
		}
		ok, err := pin.SignalMember(m, st, sig)
		if err != nil {
			errs = append(errs, fmt.Errorf("pid %d of its session: %w", m.PID, err))
		} else if ok {
			done = append(done, m.PID)
		}
	}
	return done, errors.Join(errs...)
}

// sessionPoll is how often a wait for a session to empty looks at /proc.
const sessionPoll = 20 * time.Millisecond

// waitSession waits until nothing is left of n's session, until deadline
// (the zero time: none) or until done closes, and reports whether it is
// empty. A zombie is gone. Its first look at /proc may be one begun no
// earlier than since (a time the node's lock holder was gone by).
func (c *call) waitSession(n nodes.Node, since, deadline time.Time, done <-chan struct{}) (bool, error) {
	tick := time.NewTicker(sessionPoll)
	defer tick.Stop()
	for {
		t, err := c.sessionTree(n, since)
		since = time.Now()
		if err != nil || !t.Populated {
			return err == nil, err
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-done:
			return false, nil
		case <-tick.C:
		}
	}
}

// cleanSession SIGKILLs what is left of n's session, while its lock is
// free, and waits until it is gone; it returns the pids it killed.
func (c *call) cleanSession(n nodes.Node) ([]int, error) {
	deadline := time.Now().Add(cleanWait)
	var killed []int
	for {
		// Again until none is left: one may fork while it is killed.
		pids, err := c.signalSession(n, syscall.SIGKILL)
		if err != nil {
			return killed, err
		}
		killed = append(killed, pids...)
		ok, err := c.waitSession(n, time.Now(), time.Now().Add(time.Second), nil)
		if err != nil || ok {
			return killed, err
		}
		if time.Now().After(deadline) {
			return killed, fmt.Errorf("session %d: processes left %s after SIGKILL", c.recordedProcess(n).PID, cleanWait)
		}
	}
}
