package multi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/ready"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// statusLogScan bounds how much of a node's log, from where this start's
// lines begin, status reads for a log: check.
const statusLogScan = 4 << 20

// recordReady records, in n's record, that the start of s's process saw
// it pass its check, with its last STATUS= text: what status shows for a
// check no later look can ask (notify, fd:N). Only while the record still
// names s's process; a record not written leaves the node starting or
// unready to status, nothing worse.
func (c *call) recordReady(n nodes.Node, s *started, status string) {
	if s.mine.PID == 0 {
		return
	}
	rundir := c.rundir()
	lk, err := record.Lock(context.Background(), rundir, n.Name)
	if err != nil {
		return
	}
	defer lk.Unlock()
	cur, st, rd, err := record.ReadReady(rundir, n.Name)
	if err != nil || st != s.mine {
		return
	}
	rd.At, rd.Status = time.Now(), status
	record.WriteReady(rundir, cur, st, rd)
}

// recordedReady is what n's record says of the readiness of pid, the
// node's lock holder now, and whether it says it of this process: the
// record names pid with the start time pid has now. A node restarted or
// replaced since, or a record naming another start, is not this one.
func (c *call) recordedReady(n nodes.Node, pid int) (record.Readiness, bool) {
	_, st, rd, err := record.ReadReady(c.rundir(), n.Name)
	if err != nil || st.PID <= 0 || st.PID != pid {
		return rd, false
	}
	p, err := proc.Read(pid)
	if err != nil || p.StartTicks != st.StartTicks {
		return rd, false
	}
	return rd, true
}

// seenCheck is status's run of a check only a start can see pass
// (notify, fd:N, log): ready if the start of the node's process saw it
// pass; for log, else, the lines it logged since it started, read again.
func (c *call) seenCheck(ctx context.Context, s *Status, kind nodes.ReadyKind) error {
	rd, this := c.recordedReady(s.Node, s.PID)
	if this {
		s.ReadyStatus = rd.Status
	}
	switch {
	case this && !rd.At.IsZero():
		return nil
	case this && kind == nodes.Log && rd.LogOffset >= 0:
		p, err := ready.NewProbe(s.Node, nil, rd.LogOffset)
		if err != nil {
			return err
		}
		p.Bound(statusLogScan)
		return p.Run(ctx)
	case !this:
		return fmt.Errorf("%w (%s): its record names no start of this process (pid %d): restarted or replaced since", ready.ErrNotReady, s.Node.Ready, s.PID)
	}
	return fmt.Errorf("%w (%s): its start did not see it ready, or it said STOPPING=1 since", ready.ErrNotReady, s.Node.Ready)
}

// notifyPoll is how often the notify socket a run keeps reading checks
// that its node's process still runs.
const notifyPoll = time.Second

// kept holds the notify sockets keepNotify reads, by rundir and node, so
// that a run's stop closes (and removes) them once their nodes are down
// (closeKept): the run may end before a poll sees the process gone. A
// process has one run at most.
var kept sync.Map

func keptKey(rundir, name string) string { return rundir + "\x00" + name }

// closeKept closes the notify socket kept for each node of ns.
func (c *call) closeKept(ns []nodes.Node) {
	for _, n := range ns {
		if nt, ok := kept.LoadAndDelete(keptKey(c.rundir(), n.Name)); ok {
			nt.(*ready.Notify).Close()
		}
	}
}

// keepNotify goes on reading, under a run, the notify socket of a node
// its start saw ready, for as long as that process runs: each STATUS= it
// sends is recorded, for status; a STOPPING=1 records it not ready. The
// socket is closed (and removed) once the process is gone, or its record
// names another.
func (c *call) keepNotify(n nodes.Node, s *started) {
	nt, mine := s.notify, s.mine
	if mine.PID == 0 {
		nt.Close()
		return
	}
	key := keptKey(c.rundir(), n.Name)
	kept.Store(key, nt)
	go func() {
		defer kept.CompareAndDelete(key, nt)
		defer nt.Close()
		t := time.NewTicker(notifyPoll)
		defer t.Stop()
		for {
			select {
			case <-nt.Wake():
				ok, status, err := nt.State()
				if !c.rerecordReady(n.Name, mine, ok && err == nil, status) {
					return
				}
			case <-t.C:
				if p, err := proc.Read(mine.PID); err != nil || p.Gone() || p.StartTicks != mine.StartTicks {
					return
				}
			}
		}
	}()
}

// rerecordReady records again what mine, the process n's record names,
// said on its notify socket; false when the record names another.
func (c *call) rerecordReady(name string, mine nodes.Started, ok bool, status string) bool {
	rundir := c.rundir()
	lk, err := record.Lock(context.Background(), rundir, name)
	if err != nil {
		return true // tried again at its next message
	}
	defer lk.Unlock()
	cur, st, rd, err := record.ReadReady(rundir, name)
	if err != nil || st != mine {
		return false
	}
	switch {
	case !ok:
		rd.At = time.Time{}
	case rd.At.IsZero():
		rd.At = time.Now()
	}
	if rd.Status == status && (ok == !rd.At.IsZero()) {
		return true
	}
	rd.Status = status
	record.WriteReady(rundir, cur, st, rd)
	return true
}
