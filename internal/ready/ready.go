// Package ready runs a node's readiness check ([nodes.Node.Ready]): a
// connection, an HTTP answer, a command, a file, a line of the node's log,
// or systemd's notify protocol on a socket of the node's own. Package
// engine polls a [Probe] while start waits for a node, and once for
// status.
package ready

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// ErrNotReady is wrapped by the error of a check that did not pass.
var ErrNotReady = errors.New("not ready")

// ErrSocketGone: a node's notify socket was removed (by someone else)
// before it said READY=1: it can never say it now.
var ErrSocketGone = errors.New("notify socket removed")

// ErrStartOnly: a check that only a start can see pass (notify, log:
// what the node says as it starts); status takes a running node as ready.
var ErrStartOnly = errors.New("checked only at start")

// A Probe runs one node's check, again and again while start waits; it
// keeps what a check needs between rounds (where the log was read up to).
// Not for concurrent use.
type Probe struct {
	node  nodes.Node
	check nodes.ReadyCheck
	env   []string
	re    *regexp.Regexp
	// logOff is where this start's lines begin in the logfile; -1 when
	// unknown (status).
	logOff  int64
	partial []byte
	// bound, if above 0, is how much of the log one Run reads at most.
	bound int64
	// Runner, if set, runs an exec check's command (see [Runner]).
	Runner Runner
	// RunDir, if set, is the rundir the node is recorded in: an exec
	// check of a node with a cgroup then runs in a folder beside the
	// node's, and what it leaves is killed with it, a daemon too.
	RunDir string
}

// A Runner runs an exec check's command to its end, as exec.Cmd.Run
// does, and kills it if ctx ends first: under a foreground run, through
// the run's reaper, the one waiter of its children. It returns the
// command's pid (0 if it did not start): its os.Process may have been
// released, which forgets it.
type Runner func(ctx context.Context, cmd *exec.Cmd) (int, error)

// Bound makes each Run of a log check read at most n bytes of the log:
// a status that reads it again must not read a huge one whole.
func (p *Probe) Bound(n int64) { p.bound = n }

// NewProbe returns a Probe of n's check. logOff is the logfile's size
// before this start (the log check reads only what came after), -1 when
// unknown; env is the environment an exec check runs with.
func NewProbe(n nodes.Node, env []string, logOff int64) (*Probe, error) {
	c := n.Ready
	if c.Kind == "" {
		return nil, fmt.Errorf("%s: no readiness check", n.Name)
	}
	p := &Probe{node: n, check: c, env: env, logOff: logOff}
	if c.Kind == nodes.Log {
		p.re = regexp.MustCompile(c.Target) // ParseReady compiled it
	}
	return p, nil
}

// Check is the check as given.
func (p *Probe) Check() nodes.ReadyCheck { return p.check }

// Run runs the check once, within ctx: nil when it passes, the reason
// when it does not, or [ErrStartOnly].
func (p *Probe) Run(ctx context.Context) error {
	var err error
	switch p.check.Kind {
	case nodes.TCP:
		err = checkTCP(ctx, p.check.Target)
	case nodes.HTTP:
		err = checkHTTP(ctx, p.check.Target)
	case nodes.Exec:
		err = p.runExec(ctx)
	case nodes.File:
		err = fileExists(p.check.Target)
	case nodes.Log:
		if p.logOff < 0 {
			return ErrStartOnly
		}
		err = p.runLog()
	case nodes.Notify, nodes.FD:
		return ErrStartOnly
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.check, err)
	}
	return nil
}

// execWait bounds how long an exec check's output may outlive it.
const execWait = 100 * time.Millisecond

// runExec runs the check's command, in a session of its own (and a
// cgroup folder of its own where the node has one: see [Probe.RunDir]),
// and kills what it left there once it is over (or cut off): a check run
// again and again leaves nothing running.
func (p *Probe) runExec(ctx context.Context) error {
	scratch, err := p.execOnce(ctx, true)
	if scratch && errors.Is(err, syscall.ENOSYS) {
		// No clone3 (qemu-user): the session alone.
		_, err = p.execOnce(ctx, false)
	}
	return err
}

// execOnce runs the check's command once, in a cgroup folder of its own
// if inCgroup and the node has one (scratch says it did), and kills what
// it left.
func (p *Probe) execOnce(ctx context.Context, inCgroup bool) (scratch bool, err error) {
	args := p.check.Args
	var cmd *exec.Cmd
	if p.Runner == nil {
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.WaitDelay = execWait
	} else {
		cmd = exec.Command(args[0], args[1:]...)
	}
	cmd.Dir, cmd.Env = p.node.Dir, p.env
	ownSession(cmd)
	end := func() {}
	if inCgroup {
		end, scratch = inScratch(p.node, p.RunDir, cmd)
	}
	since, pid := proc.NowTicks(), 0
	if p.Runner == nil {
		err = cmd.Run()
		if cmd.Process != nil {
			pid = cmd.Process.Pid
		}
	} else {
		pid, err = p.Runner(ctx, cmd)
	}
	killLeft(pid, since)
	end()
	return scratch, err
}

// maxLine bounds the part of a log line kept between rounds.
const maxLine = 64 << 10

// runLog reads the lines the node logged since the last round and reports
// whether one matches.
func (p *Probe) runLog() error {
	f, err := safefs.OpenLogfileToRead(p.node.LogFile)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < p.logOff {
		p.logOff, p.partial = 0, nil // truncated: read it again
	}
	size := st.Size() - p.logOff
	if p.bound > 0 && size > p.bound {
		size = p.bound
	}
	r := bufio.NewReader(io.NewSectionReader(f, p.logOff, size))
	for {
		line, err := r.ReadSlice('\n')
		p.logOff += int64(len(line))
		// A line's first maxLine bytes are kept, and matched.
		p.partial = append(p.partial, line[:min(len(line), max(maxLine-len(p.partial), 0))]...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			if p.re.Match(lineText(p.partial)) {
				return nil
			}
			p.partial = p.partial[:0]
			continue
		}
		// A line not ended yet is matched too (a prompt), and kept.
		if len(p.partial) > 0 && p.re.Match(lineText(p.partial)) {
			return nil
		}
		return errors.New("no line of its log matches yet")
	}
}

// lineText is a log line as a check matches it: without its line end
// ("\n" or "\r\n"), so that "ready$" matches the line "ready".
func lineText(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// fileExists says whether the file at path exists, reached without
// following a link someone could have planted: the link itself is not
// the file.
func fileExists(path string) error {
	return statNoLink(path)
}
