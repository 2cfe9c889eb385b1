package pidfile_test

import (
	"testing"
	"time"
)

// pollTimeout bounds every polling loop of these tests, so that a failure
// fails within seconds instead of hanging until go test's own limit.
const pollTimeout = 30 * time.Second

// pollUntil calls done every millisecond until it reports true, and fails
// the test, saying what it was waiting for, if that takes longer than
// pollTimeout (or than the test has left).
func pollUntil(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok && td.Before(deadline) {
			deadline = td.Add(-time.Second)
		}
	}
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", pollTimeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}
