package multi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// DefaultSettle is the settle window when [Cluster.Settle] is zero: long
// enough for a command that fails on a bad option, a missing file or a
// taken port to be seen exiting, short enough that a batch, which pays it
// once, hardly notices. supervisord's startsecs is 1 s, per program.
const DefaultSettle = 300 * time.Millisecond

// tailLines is how many of its last log lines a failed start shows.
const tailLines = 5

// A child is a node this process has started and not yet let go of.
type child struct {
	node nodes.Node
	cmd  *exec.Cmd
	pid  int
	born time.Time
	// logOff is the logfile's size before the node started: its own
	// lines come after; -1 if unknown.
	logOff int64
}

func (c *Cluster) settle() time.Duration {
	switch {
	case c.Settle == 0:
		return DefaultSettle
	case c.Settle < 0:
		return 0
	}
	return c.Settle
}

// settleAll waits, once for the whole batch, until every started node is
// c.settle() old, then checks that each still runs holding its lock. A
// node that exited in the window fails with its exit status and its last
// log lines. It returns when the window is over, or ctx is done (the nodes
// are then checked at once).
func (c *Cluster) settleAll(ctx context.Context, kids []*child) {
	window := c.settle()
	if window <= 0 {
		return
	}
	var last time.Time
	for _, ch := range kids {
		if ch != nil && ch.born.After(last) {
			last = ch.born
		}
	}
	if last.IsZero() {
		return
	}
	// One timer for the batch: the window ends when the youngest node is
	// old enough, and every older one is then older still.
	t := time.NewTimer(time.Until(last.Add(window)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// logTail returns the last n non-empty lines written to the logfile at
// path after offset off, joined by " | ", each cut to a sane length; ""
// if none or the file cannot be read.
func logTail(path string, off int64, n int) string {
	const maxTail = 4096
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return "" // a FIFO, say: opening it could block
	}
	// Not through a link swapped in since the node opened it: root would
	// print another file's last lines.
	f, err := os.OpenFile(path, logTailFlags, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= off {
		return ""
	}
	from := max(off, st.Size()-maxTail)
	b, err := io.ReadAll(io.NewSectionReader(f, from, st.Size()-from))
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			if len(s) > 200 {
				s = s[:200] + "..."
			}
			lines = append(lines, fmt.Sprintf("%q", s))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
