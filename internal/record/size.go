package record

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// tooLarge is the error of n, whose record at path would be size bytes.
func tooLarge(n nodes.Node, path string, size int) error {
	return fmt.Errorf("%s: %w: %s would be %d bytes, over the %d a record may have (its command, options and --env)",
		n.Name, nodes.ErrRecordTooLarge, path, size, maxRecord)
}

// worstStatus is the STATUS= text whose JSON is the longest.
var worstStatus = strings.Repeat("\x00", MaxReadyStatus)

// CheckSize returns an error wrapping [nodes.ErrRecordTooLarge] if the record
// of n in rundir, once its process is recorded, would be too large to be
// read back: checked before anything starts, so that no node runs that
// its record cannot name.
func CheckSize(rundir string, n nodes.Node) error {
	// Room for the process and for fields records may gain.
	rb, err := encodeRecord(n, nodes.Started{PID: math.MaxInt32, StartTicks: math.MaxUint64, PidfdIno: math.MaxUint64},
		Readiness{At: time.Unix(0, math.MaxInt64), Status: worstStatus, LogOffset: math.MaxInt64})
	if err != nil {
		return err
	}
	size := rb.buf.Len() - 1 // without its newline
	recordBufs.Put(rb)
	if size+256 >= maxRecord {
		return tooLarge(n, Path(rundir, n.Name), size)
	}
	return nil
}
