// Package logwriter is a node's log writer: a small process of this
// program's own that a node with a --log-max-size writes its output to
// through a pipe, and that keeps the node's logfile under that size by
// rotation ([Rotator]), with a marker line where the node started and
// one where it ended, with its exit status or signal ([Main]). The
// writer runs in its own session, outside the node's process group and
// cgroup, so that a stop of the node never stops it before the node's
// last line is written.
package logwriter

// StampLayout is how multi writes a time on a line: RFC 3339 in UTC
// with microseconds, as journald shows it.
const StampLayout = "2006-01-02T15:04:05.000000Z07:00"
