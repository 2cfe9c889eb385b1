//go:build unix

package launch

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/logwriter"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/safefs"
)

// logPipeSize is the size asked for the pipe to a node's log writer
// (see deepen).
const logPipeSize = 1 << 20

// logDrain bounds how long a failed start waits for the node's log
// writer to write the node's last lines before it shows them.
const logDrain = 2 * time.Second

// startLogWriter starts the log writer (package logwriter) of the
// child, which has exec'd its command with its output on the pipe
// whose read end is r. The writer runs in a session of its own, outside
// the node's process group and cgroup: a stop of the node's tree never
// reaches it, and it ends when the node's output does.
func (ch *Child) startLogWriter(r *os.File, self string) error {
	n := ch.node
	maxSize, keep, _ := n.Limits.LogRotation()
	var ticks uint64
	if st, err := proc.Read(ch.pid); err == nil {
		ticks = st.StartTicks
	}
	null, err := devNull()
	if err != nil {
		return err
	}
	env := []string{logwriter.Env + "=1", "GOMAXPROCS=1"}
	if shared := safefs.Accepted(); shared != "" {
		env = append(env, safefs.SharedEnv+"="+shared)
	}
	cmd := &exec.Cmd{
		Path: self,
		Args: []string{"multi: log " + n.Name, n.LogFile, n.FullName(), strconv.Itoa(ch.pid),
			strconv.FormatUint(ticks, 10), strconv.FormatInt(maxSize, 10), strconv.Itoa(keep)},
		Env:         env,
		Dir:         "/",
		Stdin:       r,
		Stdout:      null,
		Stderr:      null,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	// The node's process, pinned while it is this process's unreaped
	// child: the writer learns its exit status through it.
	if pidfd := openPidfd(ch.pid); pidfd != nil {
		defer pidfd.Close()
		cmd.ExtraFiles = []*os.File{pidfd}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ch.logDone = make(chan struct{})
	go func() {
		cmd.Wait()
		close(ch.logDone)
	}()
	return nil
}

// logEnds is "; its log ends: " and the last lines the node wrote to
// its logfile in this start, "" if none can be shown; a log writer
// first gets logDrain to write them.
func (ch *Child) logEnds() string {
	if ch.logOff < 0 || piped(ch.cmd) {
		return ""
	}
	if ch.logDone != nil {
		select {
		case <-ch.logDone:
		case <-time.After(logDrain):
		}
	}
	if tail := logTail(ch.node.LogFile, ch.logOff, tailLines, "multi: "+ch.node.FullName()+" "); tail != "" {
		return "; its log ends: " + tail
	}
	return ""
}
