package multi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// An Action is what [Cluster.Apply] does to one node.
type Action string

// The actions of Apply.
const (
	Keep     Action = "keep"    // running as described: untouched, same process
	StartIt  Action = "start"   // not running: started
	Replace  Action = "restart" // running otherwise than described: restarted
	Withdraw Action = "stop"    // no longer described (ApplyOptions.Remove): stopped, forgotten
)

// A Change is Apply's plan for one node and, unless a dry run, its
// result.
type Change struct {
	Action Action   `json:"action"`
	Why    []string `json:"why,omitempty"` // the fields that differ ("command", "env"...), or why it starts or stops
	Result Result   `json:"result"`
}

// ApplyOptions tune [Cluster.Apply]. The zero value is the default.
type ApplyOptions struct {
	DryRun  bool           // plan only, touching nothing
	Restart RestartOptions // how changed nodes restart (rolling, readiness-gated)
	Remove  []nodes.Node   // recorded nodes no longer described: stopped (Restart.Stop), forgotten
}

// Apply makes the running nodes what c.Nodes describe: it starts those
// not running, restarts (rolling) those whose record differs, leaves the
// others untouched, and stops and forgets o.Remove. The changes are in
// c.Nodes' order, then o.Remove's.
func (c *Cluster) Apply(ctx context.Context, o ApplyOptions) ([]Change, error) {
	// A node Status cannot tell is left as it is, failed: the others go on.
	sts, _ := c.Status(ctx)
	rundir := cmp.Or(c.RunDir, nodes.DefaultRunDir())
	changes := make([]Change, 0, len(c.Nodes)+len(o.Remove))
	var starts, restarts []string
	var errs []error
	for i, s := range sts {
		ch := Change{Action: Keep, Result: Result{Node: c.Nodes[i], Outcome: AlreadyRunning, PID: s.PID}}
		switch s.State {
		case StateUnknown:
			ch.Result = Result{Node: c.Nodes[i], Outcome: Failed, Err: s.Err}
			errs = append(errs, s.Err)
		case StateElsewhere:
			ch.Why = []string{"held from another pid namespace: not compared"}
		case StateRunning:
			rec, err := record.Read(rundir, s.Node.Name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				ch.Why = []string{"record: " + err.Error()}
			}
			if len(ch.Why) == 0 {
				ch.Why = differs(c.Nodes[i], rec, err == nil)
			}
			if len(ch.Why) == 0 {
				ch.Why = envFilesChanged(c.Nodes[i], record.Path(rundir, s.Node.Name))
			}
			if len(ch.Why) > 0 {
				ch.Action = Replace
				restarts = append(restarts, s.Node.Name)
			}
		default:
			ch.Action, ch.Why = StartIt, []string{"not running (" + string(s.State) + ")"}
			starts = append(starts, s.Node.Name)
		}
		changes = append(changes, ch)
	}
	for _, n := range o.Remove {
		changes = append(changes, Change{Action: Withdraw, Why: []string{"no longer described"}, Result: Result{Node: n}})
	}
	if o.DryRun {
		return changes, errors.Join(errs...)
	}
	results := map[string]Result{}
	run := func(names []string, do func(*Cluster) ([]Result, error)) {
		if len(names) == 0 {
			return
		}
		sub, err := c.Only(names...)
		if err != nil {
			errs = append(errs, err)
			return
		}
		rs, err := do(sub)
		errs = append(errs, err)
		for _, r := range rs {
			results[r.Node.Name] = r
		}
	}
	ro := o.Restart
	ro.Rolling = true
	run(restarts, func(sub *Cluster) ([]Result, error) { return sub.Restart(ctx, ro) })
	run(starts, func(sub *Cluster) ([]Result, error) { return sub.Start(ctx) })
	if len(o.Remove) > 0 {
		gone := c.sub(o.Remove)
		rs, err := gone.StopWait(ctx, o.Restart.Stop)
		errs = append(errs, err)
		for i, r := range rs {
			if r.Err == nil {
				rs[i].RecordErr = forgetStopped(ctx, rundir, r.Node)
			}
			changes[len(c.Nodes)+i].Result = rs[i]
		}
	}
	for i := range c.Nodes {
		if r, ok := results[c.Nodes[i].Name]; ok {
			changes[i].Result = r
		}
	}
	return changes, errors.Join(errs...)
}

// forgetStopped removes n's record under its record lock, which a start
// holds from reading the record until it has recorded its process: a
// node started again meanwhile keeps its record.
func forgetStopped(ctx context.Context, rundir string, n nodes.Node) error {
	lk, err := record.Lock(ctx, rundir, n.Name)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State == pidfile.Running {
		return fmt.Errorf("%w: running again, or cannot be inspected; its record is kept", ErrAlreadyRunning)
	}
	if err := record.Remove(rundir, n.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// differs names the fields of want its record rec (if found) says
// otherwise.
func differs(want, rec nodes.Node, found bool) []string {
	if !found {
		return []string{"no record"}
	}
	var why []string
	add := func(field string, same bool) {
		if !same {
			why = append(why, field)
		}
	}
	add("command", slices.Equal(want.Command, rec.Command))
	add("dir", want.Dir == rec.Dir)
	add("env", slices.Equal(want.Env, rec.Env))
	add("env_files", slices.Equal(want.EnvFiles, rec.EnvFiles))
	add("ready", want.Ready.String() == rec.Ready.String())
	add("kill_mode", want.KillMode == rec.KillMode)
	add("limits", want.Limits == rec.Limits)
	add("self_lock", want.SelfLock == rec.SelfLock)
	add("after", slices.Equal(want.After, rec.After))
	add("pidfile", want.PidFile == rec.PidFile)
	add("logfile", want.LogFile == rec.LogFile)
	return why
}

// envFilesChanged names each env file of n modified since its record
// (at path) was written, which its start did after reading them.
func envFilesChanged(n nodes.Node, path string) []string {
	rst, err := os.Stat(path)
	if err != nil {
		return []string{"record: " + err.Error()}
	}
	var why []string
	for _, f := range n.EnvFiles {
		st, err := os.Stat(f)
		if err != nil {
			why = append(why, "env file "+f+": "+err.Error())
		} else if !st.ModTime().Before(rst.ModTime()) {
			why = append(why, "env file "+f+" changed since it started")
		}
	}
	return why
}
