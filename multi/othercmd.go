package multi

import (
	"fmt"
	"slices"

	"github.com/multi-launcher/multi/nodes"
)

// An otherCommandError refuses a start that found the node running
// already from a record that says another command or working folder.
type otherCommandError struct {
	PID          int
	Running, Dir []string // the record's command and folder ([]string{dir})
	Given, InDir []string // the start's
}

func (e *otherCommandError) Error() string {
	what := fmt.Sprintf("%s, not %s", nodes.Quote(e.Running), nodes.Quote(e.Given))
	if slices.Equal(e.Running, e.Given) {
		what = fmt.Sprintf("started in %s, not %s", nodes.Quote(e.Dir), nodes.Quote(e.InDir))
	}
	return fmt.Sprintf("%v (pid %d): %s; stop it first, or give it another name (restart replaces its command)", ErrOtherCommand, e.PID, what)
}

// Is makes an otherCommandError match [ErrOtherCommand].
func (e *otherCommandError) Is(target error) bool { return target == ErrOtherCommand }

// otherCommand returns the error of a start of n that found it running
// (pid), when its record prev says another command or working folder;
// nil when they agree, or when either folder is unknown.
func otherCommand(prev, n nodes.Node, pid int) error {
	sameDir := prev.Dir == "" || n.Dir == "" || prev.Dir == n.Dir
	if slices.Equal(prev.Command, n.Command) && sameDir {
		return nil
	}
	return &otherCommandError{PID: pid, Running: prev.Command, Dir: []string{prev.Dir}, Given: n.Command, InDir: []string{n.Dir}}
}
