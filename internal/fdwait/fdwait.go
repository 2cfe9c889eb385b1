// Package fdwait lets the operations of one process that run short of
// descriptors (EMFILE, ENFILE) wait for those the others will give back,
// and not for those nothing will: under a low RLIMIT_NOFILE a start or a
// stop of many nodes slows down rather than fails, and one that needs
// more than the limit leaves fails at once, naming the limit.
package fdwait

import (
	"errors"
	"sync/atomic"
	"syscall"
	"time"
)

// holders and waiters count the operations of this process that hold
// descriptors they will close (Hold), and those of them waiting for one
// (Retry): when every holder waits, none will be given back.
var holders, waiters atomic.Int64

// Wait bounds how long Retry waits for a descriptor.
const Wait = 30 * time.Second

// Hold counts an operation that holds descriptors it will close, until
// release (once).
func Hold() (release func()) {
	holders.Add(1)
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			holders.Add(-1)
		}
	}
}

// Short reports whether err is EMFILE or ENFILE.
func Short(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// Retry runs try, and again while it fails for want of a descriptor
// (short; nil means Short) and another operation of this process holds
// descriptors it will give back, up to Wait. The error of a try given up
// says so, naming the limit.
func Retry(try func() error, short func(error) bool) error {
	if short == nil {
		short = Short
	}
	seen := holders.Load()
	err := try()
	if err == nil || !short(err) {
		return err
	}
	waiters.Add(1)
	defer waiters.Add(-1)
	deadline := time.Now().Add(Wait)
	for delay := time.Millisecond; short(err) && time.Now().Before(deadline); delay = min(2*delay, 50*time.Millisecond) {
		// Given up when every holder waits too, and none let go since
		// the last try.
		h := holders.Load()
		if h <= waiters.Load() && h >= seen {
			break
		}
		seen = h
		time.Sleep(delay)
		err = try()
	}
	if short(err) {
		err = &limitError{err}
	}
	return err
}

// A limitError is a want of descriptors, the limit named.
type limitError struct{ err error }

func (e *limitError) Error() string { return e.err.Error() + " (" + limitText() + ")" }
func (e *limitError) Unwrap() error { return e.err }

// Explain returns err naming the descriptor limit where err is for want
// of a descriptor (once); else err.
func Explain(err error) error {
	var le *limitError
	if err == nil || !Short(err) || errors.As(err, &le) {
		return err
	}
	return &limitError{err}
}
