package cli

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// celeryWorker is the command celery multi implies and multi needs
// written out: -n %h names the worker as celery multi does.
const celeryWorker = "-- celery -A proj worker -n %h"

// noCommandHint is what a "no command" usage error adds: the line as
// given with a celery worker after --, since celery multi users are used
// to giving none.
func noCommandHint(c *cli.Context) string {
	line := append([]string{"multi", c.Command.Name}, c.Args().Slice()...)
	return "for a celery worker: " + nodes.Quote(line) + " " + celeryWorker
}

// ErrSettingNotCommand is matched by the usage error for a command after
// -- that is a KEY=VALUE setting, not a program (see checkCommandWord).
var ErrSettingNotCommand = errors.New("a setting, not a command")

// checkCommandWord refuses a command whose program looks like a setting
// (KEY=VALUE: has an "=" and no "/") and is not found on PATH: celery
// multi passes what follows -- to the app's configuration, multi runs it.
// A program that exists is never refused, whatever its name; env is the
// nodes' added environment, where a PATH of their own makes the lookup
// here meaningless.
func checkCommandWord(command, env []string) error {
	prog := command[0]
	if !strings.Contains(prog, "=") || strings.Contains(prog, "/") {
		return nil
	}
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return nil
		}
	}
	if _, err := exec.LookPath(prog); err == nil || errors.Is(err, exec.ErrDot) {
		return nil
	}
	return fmt.Errorf("%s is not a program on PATH (%w): multi's -- is followed by the command to run, "+
		"unlike celery multi's, which passes settings to the app; give them after the command "+
		"(%s -- %s), or a variable for the environment with --env=KEY=VALUE",
		nodes.Quote([]string{prog}), ErrSettingNotCommand, celeryWorker, nodes.Quote([]string{prog}))
}
