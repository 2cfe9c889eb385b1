package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/multi-launcher/multi/internal/logwriter"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/urfave/cli/v2"
)

// logsCommand prints the last lines of nodes' logfiles, and follows them
// with -f.
func logsCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "logs",
		Usage:     "print the last lines of nodes' logfiles (this project's nodes without names); -f follows them",
		UsageText: "multi logs [flags] [NODES...] [-n N] [-f]",
		Description: `Of several nodes, each line is prefixed with its node's name as multi run
prints it ("w1 | text"; the name coloured on a terminal); one node's
logfile is printed as it is. -f starts after those last lines and follows
each logfile, through a rotation (a new file created at its name) and a
truncation (logrotate's copytruncate), until Ctrl-C. --timestamps puts
before each line that -f follows the time it was read (RFC 3339, UTC,
microseconds; a logfile keeps no times, so the last lines printed
before have none); --log-format=json prints one object per line: node,
stream "output" (a logfile holds stdout and stderr together), line, and
time where there is one.

   multi logs w1
   multi logs -n 100       # this project's nodes: the last 100 lines of each
   multi logs w1 w2 -f     # until Ctrl-C`,
		Flags: common(flagLogfile, flagRundir, flagLines, flagFollow, flagAll, flagTimestamps, flagLogFormat),
	}, grammar{project: true}, func(c *cli.Context, a *call) (int, error) {
		ns, err := resolve(c, a)
		if err != nil {
			return exitUsage, err
		}
		color := useColor(isTerminal(c.App.Writer), a.NoColor)
		code := exitOK
		failed := func(name string, err error) {
			fmt.Fprintf(c.App.ErrWriter, "%s: FAILED: %v\n", name, err)
			code = exitFailed
		}
		var logs []*logSource
		defer func() {
			for _, l := range logs {
				l.f.Close()
			}
		}()
		for i, n := range ns {
			l, err := openLog(n.Name, n.LogFile)
			if err != nil {
				failed(n.Name, err)
				continue
			}
			if len(ns) > 1 {
				l.prefix = logPrefix(n.Name, i, color)
			}
			l.stamp, l.json = a.Timestamps, a.LogFormat == "json"
			logs = append(logs, l)
		}
		err = printLogs(c.Context, c.App.Writer, logs, a.Lines, a.Follow, failed)
		if err != nil && !errors.Is(err, context.Canceled) {
			return exitFailed, err
		}
		return code, nil
	})
}

func setLines(f *flags, v string) error {
	if v == "all" {
		f.Lines = -1
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("--lines is a number of lines (0 or more) or all, not %q", v)
	}
	f.Lines = n
	return nil
}

// logColors paint the names of several nodes' lines, one per node in
// turn; red is left for failures.
var logColors = []string{"\033[36m", "\033[35m", "\033[34m", green, yellow}

// logPrefix is what goes before each line of the node name, the i-th
// printed: "name | ", as multi run prefixes its nodes' output.
func logPrefix(name string, i int, color bool) []byte {
	if !color {
		return []byte(name + " | ")
	}
	return []byte(logColors[i%len(logColors)] + name + " |\033[0m ")
}

// maxLine is the longest line held back for its newline; a longer one
// goes in pieces, as multi run's.
const maxLine = 64 << 10

// A logSource is one node's logfile being printed: the file, where the
// next read starts, and (when prefixed) the start of a line whose newline
// has not been written yet.
type logSource struct {
	name, path string
	prefix     []byte // nil: the file's bytes are copied as they are
	// stamp: each line followed gets the time it was read; json: each
	// line is a JSON object; live: the lines are followed now.
	stamp, json, live bool
	f                 *os.File
	off               int64
	partial           []byte
	buf               []byte
}

// openLog opens the logfile at path as [safefs.OpenLogfileToRead] does: no
// link followed, nothing but a regular file.
func openLog(name, path string) (*logSource, error) {
	f, err := safefs.OpenLogfileToRead(path)
	if err != nil {
		return nil, err
	}
	return &logSource{name: name, path: path, f: f, buf: make([]byte, 32<<10)}, nil
}

// printLogs prints the last n lines of each log (all of it if n < 0), one
// log after the other. With follow it then prints what is appended to any
// of them until ctx is done: fsnotify on their folders says when to look,
// and a slow poll stays under it. A log that fails is reported to failed
// and dropped; printLogs returns an error only for w.
func printLogs(ctx context.Context, w io.Writer, logs []*logSource, n int, follow bool, failed func(string, error)) error {
	live := logs[:0:0]
	for _, l := range logs {
		err := l.start(n)
		if err == nil {
			err = l.drain(w)
		}
		var werr writeError
		if errors.As(err, &werr) {
			return werr.err
		}
		if err != nil {
			failed(l.name, fmt.Errorf("logfile %s: %w", l.path, err))
			continue
		}
		if !follow {
			if err := l.flush(w); err != nil {
				return err
			}
		}
		live = append(live, l)
	}
	if !follow || len(live) == 0 {
		return nil
	}
	for _, l := range live {
		l.live = true
	}
	var events <-chan fsnotify.Event // nil, so never ready, without fsnotify
	var errs <-chan error
	if watch, err := fsnotify.NewWatcher(); err == nil {
		defer watch.Close()
		for _, l := range live {
			watch.Add(filepath.Dir(l.path)) // a folder added again is no error
		}
		events, errs = watch.Events, watch.Errors
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, l := range live {
				l.flush(w)
			}
			return ctx.Err()
		case <-events:
		case <-errs:
		case <-tick.C:
		}
		kept := live[:0]
		for _, l := range live {
			err := l.follow(w)
			var werr writeError
			if errors.As(err, &werr) {
				return werr.err
			}
			if err != nil {
				failed(l.name, fmt.Errorf("logfile %s: %w", l.path, err))
				continue
			}
			kept = append(kept, l)
		}
		live = kept
		if len(live) == 0 {
			return nil
		}
	}
}

// writeError is a failure to write the output, which ends every log.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// start sets where the log's last n lines begin (n < 0: its start).
func (l *logSource) start(n int) error {
	st, err := l.f.Stat()
	if err != nil {
		return err
	}
	l.off, err = lastLines(l.f, st.Size(), n)
	return err
}

// lastLines returns the offset in f, of size bytes, where its last n
// lines begin, reading backwards from the end; a last line without its
// newline counts, as tail counts it. n < 0 means all: 0.
func lastLines(f io.ReaderAt, size int64, n int) (int64, error) {
	if n < 0 {
		return 0, nil
	}
	if n == 0 {
		return size, nil
	}
	buf := make([]byte, 64<<10)
	seen := 0
	for pos := size; pos > 0; {
		k := min(int64(len(buf)), pos)
		pos -= k
		b := buf[:k]
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			// The newline that ends the file ends the last line: it
			// is not the start of one.
			if b[i] != '\n' || pos+int64(i) == size-1 {
				continue
			}
			if seen++; seen == n {
				return pos + int64(i) + 1, nil
			}
		}
	}
	return 0, nil
}

// drain prints what the file holds from l.off to its end.
func (l *logSource) drain(w io.Writer) error {
	for {
		k, err := l.f.ReadAt(l.buf, l.off)
		if k > 0 {
			l.off += int64(k)
			if werr := l.emit(w, l.buf[:k]); werr != nil {
				return writeError{werr}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// emit writes b: as it is, or each whole line with the prefix, holding
// back a line not ended yet.
func (l *logSource) emit(w io.Writer, b []byte) error {
	if l.prefix == nil && !l.stamp && !l.json {
		_, err := w.Write(b)
		return err
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.partial = append(l.partial, b...)
			if len(l.partial) >= maxLine {
				return l.flush(w)
			}
			return nil
		}
		line := l.format(append(l.partial, b[:i]...))
		l.partial = l.partial[:0]
		b = b[i+1:]
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// flush writes a line held back, ended with a newline: the log ends, or
// its file is replaced or truncated.
func (l *logSource) flush(w io.Writer) error {
	if len(l.partial) == 0 {
		return nil
	}
	line := l.format(l.partial)
	l.partial = l.partial[:0]
	_, err := w.Write(line)
	return err
}

// format is the line text (without its newline) as printed, ending in a
// newline: after its time (--timestamps, a followed line) and prefix, or
// as a JSON object (--log-format=json).
func (l *logSource) format(text []byte) []byte {
	stamp := ""
	if l.live && (l.stamp || l.json) {
		stamp = time.Now().UTC().Format(logwriter.StampLayout)
	}
	if l.json {
		return logwriter.AppendJSONLine(nil, stamp, l.name, "output", text)
	}
	var b []byte
	if stamp != "" {
		b = append(append(b, stamp...), ' ')
	}
	b = append(append(b, l.prefix...), text...)
	return append(b, '\n')
}

// follow prints what was appended since the last look. A file at the log's
// path that is not the one open (rotated: renamed, a new one created) is
// read from its start once the old one is printed to its end; a file
// shorter than what was read (truncated) is read again from its start.
// While the path names no file (between a rotation's rename and its
// create) the old file is still followed.
func (l *logSource) follow(w io.Writer) error {
	if err := l.drain(w); err != nil {
		return err
	}
	cur, err := l.f.Stat()
	if err != nil {
		return err
	}
	nf, err := safefs.OpenLogfileToRead(l.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	st, err := nf.Stat()
	if err == nil && !os.SameFile(st, cur) {
		if err := l.flush(w); err != nil {
			nf.Close()
			return writeError{err}
		}
		l.f.Close()
		l.f, l.off = nf, 0
		return l.drain(w)
	}
	nf.Close()
	if cur.Size() < l.off {
		if err := l.flush(w); err != nil {
			return writeError{err}
		}
		l.off = 0
		return l.drain(w)
	}
	return err
}
