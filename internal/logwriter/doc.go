// Package logwriter is a node's log writer: a small process of this
// program's own that a node with a --log-max-size writes its output to
// through a pipe, and that keeps the node's logfile under that size by
// rotation ([Rotator]), with a marker line where the node started and
// one where it ended, with its exit status or signal ([Main]). The
// writer runs in its own session, outside the node's process group and
// cgroup, so that a stop of the node never stops it before the node's
// last line is written.
package logwriter
