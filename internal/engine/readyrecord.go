package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/internal/ready"
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
func (c *Set) recordReady(n nodes.Node, s *started, status string) {
	if s.mine.PID == 0 {
		return
	}
	rundir := c.rundir()
	lk, err := nodes.LockRecord(context.Background(), rundir, n.Name)
	if err != nil {
		return
	}
	defer lk.Unlock()
	cur, st, rd, err := nodes.ReadRecordReady(rundir, n.Name)
	if err != nil || st != s.mine {
		return
	}
	rd.At, rd.Status = time.Now(), status
	nodes.WriteRecordReady(rundir, cur, st, rd)
}

// recordedReady is what n's record says of the readiness of pid, the
// node's lock holder now, and whether it says it of this process: the
// record names pid with the start time pid has now. A node restarted or
// replaced since, or a record naming another start, is not this one.
func (c *Set) recordedReady(n nodes.Node, pid int) (nodes.Readiness, bool) {
	_, st, rd, err := nodes.ReadRecordReady(c.rundir(), n.Name)
	if err != nil || st.PID <= 0 || st.PID != pid {
		return rd, false
	}
	p, err := nodes.ReadProc(pid)
	if err != nil || p.StartTicks != st.StartTicks {
		return rd, false
	}
	return rd, true
}

// seenCheck is status's run of a check only a start can see pass
// (notify, fd:N, log): ready if the start of the node's process saw it
// pass; for log, else, the lines it logged since it started, read again.
func (c *Set) seenCheck(ctx context.Context, s *Status, kind string) error {
	rd, this := c.recordedReady(s.Node, s.PID)
	if this {
		s.ReadyStatus = rd.Status
	}
	switch {
	case this && !rd.At.IsZero():
		return nil
	case this && kind == "log" && rd.LogOffset >= 0:
		p, err := ready.NewProbe(s.Node, nil, rd.LogOffset)
		if err != nil {
			return err
		}
		p.Bound(statusLogScan)
		return p.Run(ctx)
	case !this:
		return fmt.Errorf("%w (%s): its record names no start of this process (pid %d): restarted or replaced since", ready.ErrNotReady, s.Node.Ready, s.PID)
	}
	return fmt.Errorf("%w (%s): its start did not see it ready", ready.ErrNotReady, s.Node.Ready)
}
