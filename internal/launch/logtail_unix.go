//go:build unix

package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// tailLines is how many of its last log lines a failed start shows.
const tailLines = 5

// logTailFlags opens a logfile to read its last lines: never through a
// link, never hanging on a FIFO.
const logTailFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// logTail returns the last n non-empty lines written to the logfile at
// path after offset off, joined by " | ", each cut to a sane length; ""
// if none or the file cannot be read. Lines that begin with marker (the
// log writer's own) are left out.
func logTail(path string, off int64, n int, marker string) string {
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
		if s := strings.TrimSpace(string(l)); s != "" && !strings.HasPrefix(s, marker) {
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
