package nodes

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ErrRecordTooLarge is wrapped by the error of a node whose record would
// be too large to be read back (its command, options and environment
// together over about 1 MiB): nothing is written.
var ErrRecordTooLarge = errors.New("record too large")

func tooLarge(n Node, path string, size int) error {
	return fmt.Errorf("%s: %w: %s would be %d bytes, over the %d a record may have (its command, options and --env)",
		n.Name, ErrRecordTooLarge, path, size, maxRecord)
}

// worstStatus is the STATUS= text whose JSON is the longest.
var worstStatus = strings.Repeat("\x00", MaxReadyStatus)

// CheckRecord returns an error wrapping [ErrRecordTooLarge] if the record
// of n in rundir, once its process is recorded, would be too large to be
// read back: checked before anything starts, so that no node runs that
// its record cannot name.
func CheckRecord(rundir string, n Node) error {
	// Room for the process and for fields records may gain.
	rb, err := encodeRecord(n, Started{PID: math.MaxInt32, StartTicks: math.MaxUint64, PidfdIno: math.MaxUint64},
		Readiness{At: time.Unix(0, math.MaxInt64), Status: worstStatus, LogOffset: math.MaxInt64})
	if err != nil {
		return err
	}
	size := rb.buf.Len() - 1 // without its newline
	recordBufs.Put(rb)
	if size+256 >= maxRecord {
		return tooLarge(n, RecordPath(rundir, n.Name), size)
	}
	return nil
}
