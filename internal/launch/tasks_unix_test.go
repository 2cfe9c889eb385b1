//go:build unix

package launch

import (
	"errors"
	"fmt"
	"testing"
)

// A node that exited at once while a task limit had little room left is
// told the limit, the likely reason; with room, or for another failure,
// nothing is added. The error still matches what it did.
func TestLimitHint(t *testing.T) {
	exited := &ExitError{Status: 2 << 8, Err: fmt.Errorf("%w (exit status 2; see w1.log)", ErrExitedAtOnce)}
	room := 3
	fakeRoom(t, &room, "pids.max 25 of cgroup /t")
	err := withLimitHint(exited)
	var ee *ExitError
	if !errors.Is(err, ErrExitedAtOnce) || !errors.As(err, &ee) || ErrExitCode(err) != 2 {
		t.Errorf("the hint lost the error: %v (exit code %d)", err, ErrExitCode(err))
	}
	if want := "exited at once (exit status 2; see w1.log); only 3 tasks were left under the pids.max 25 of cgroup /t: it may have found none to make"; err.Error() != want {
		t.Errorf("with 3 tasks left:\n got %s\nwant %s", err, want)
	}
	other := errors.New("logfile w1.log: permission denied")
	if err := withLimitHint(other); err != other {
		t.Errorf("another failure got a hint: %v", err)
	}
	room = 500
	if err := withLimitHint(exited); err != error(exited) {
		t.Errorf("with 500 tasks left: %v", err)
	}
}
