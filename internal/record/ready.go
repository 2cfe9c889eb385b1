package record

import (
	"time"
	"unicode/utf8"

	"github.com/multi-launcher/multi/nodes"
)

// MaxReadyStatus bounds the STATUS= text a record keeps (bytes).
const MaxReadyStatus = 200

// Readiness is what the start of a node's process saw of its readiness
// check, kept in the node's record beside the process ([nodes.Started]) it
// belongs to: a status can then tell a node that spoke its protocol
// (notify, fd:N) to the start that waited, which no later look can ask,
// and where its log's lines of this start begin.
type Readiness struct {
	// At is when the start saw the check pass; zero if it did not.
	At time.Time
	// Status is the node's last STATUS= text (notify), at most
	// MaxReadyStatus bytes.
	Status string
	// LogOffset is the logfile's size before the process started (its
	// own lines come after), -1 if unknown.
	LogOffset int64
}

// put sets rd's fields of r.
func (rd Readiness) put(r *record) {
	if !rd.At.IsZero() {
		r.ReadyAt = rd.At.UnixNano()
	}
	r.ReadyStatus = clip(rd.Status, MaxReadyStatus)
	if rd.LogOffset >= 0 {
		off := rd.LogOffset
		r.LogOffset = &off
	}
}

// readiness is what r says of its process's readiness.
func (r record) readiness() Readiness {
	rd := Readiness{Status: r.ReadyStatus, LogOffset: -1}
	if r.ReadyAt > 0 {
		rd.At = time.Unix(0, r.ReadyAt)
	}
	if r.LogOffset != nil && *r.LogOffset >= 0 {
		rd.LogOffset = *r.LogOffset
	}
	return rd
}

// clip cuts s to at most n bytes, not inside a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// ReadReady reads a record like [ReadStarted], with what the
// start of the process it names saw of its readiness check. A record
// that names no process has no readiness of its own: zero, LogOffset -1.
func ReadReady(rundir, name string) (nodes.Node, nodes.Started, Readiness, error) {
	n, r, err := readRecord(nil, rundir, name)
	n.Recorded = nodes.Started{}
	if err != nil || r.started().PID == 0 {
		return n, r.started(), Readiness{LogOffset: -1}, err
	}
	return n, r.started(), r.readiness(), err
}
