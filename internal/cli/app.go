// Package cli is multi's command line: the urfave/cli application, its
// flags and verbs, the grammar its arguments follow (node names, -SIGNAL,
// per-node options, "-- COMMAND"), and everything it prints (result lines,
// the status table and JSON, progress, colour, logs, completion code and
// the manual page). It builds the nodes with package nodes, calls one
// method of package multi per verb and maps the outcome to words and an
// exit code; the launching, locking and signalling are in those packages.
//
// The package imports urfave/cli under its own name, cli: inside this
// package "cli." always means urfave/cli.
//
// Files by concern: app.go (the app, Run, exit codes, version), flags.go
// (every flag, and the typed field its value goes to), parse.go (a verb's
// arguments typed into the call its run gets, usage errors), verbs.go
// (start, stop, stopwait, kill, restart; building the cluster), output.go
// (result lines, colour, progress), status.go, logs.go, grammar.go (names,
// expand, show, get), completion.go (completion and man).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/urfave/cli/v2"
)

// Exit codes. status follows LSB instead: 0 all running, 1 a stale pidfile,
// 3 not running, 4 unknown.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitStopped = 3
	exitUnknown = 4
	// exitLingering: status of a node whose lock is free while processes
	// are left in its cgroup or session (LSB leaves 150-199 to
	// applications).
	exitLingering = 150
)

// Run runs multi with the command line args (args[0] is the program name),
// printing to stdout and stderr, and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := interruptible()
	defer stop()
	app := newApp(stdout, stderr)
	if len(args) < 2 {
		app.Writer = stderr
		app.Run(args[:1]) // shows the help
		return exitUsage
	}
	if isHelpCompletion(args) {
		// "multi help <TAB>": the commands. urfave/cli's own help command
		// offers only "help h", and is one value shared by every app, so
		// it is not changed but stepped around.
		for _, cmd := range app.VisibleCommands() {
			fmt.Fprintln(stdout, cmd.Name)
		}
		return exitOK
	}
	if err := app.RunContext(ctx, args); err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return exitUsage
	}
	var in interrupted
	if errors.As(context.Cause(ctx), &in) && app.Metadata[ownSignals] == nil {
		// As a shell reports a command killed by the signal: 130 for
		// Ctrl-C, 143 for TERM.
		return 128 + int(in.sig)
	}
	code, _ := app.Metadata[exitCode].(int) // exitOK unless a verb said otherwise
	return code
}

// isHelpCompletion reports whether args ask for completion after "multi
// help" (bash passes the words before the cursor).
func isHelpCompletion(args []string) bool {
	return len(args) >= 3 && (args[1] == "help" || args[1] == "h") && args[len(args)-1] == "--generate-bash-completion"
}

// interrupted is the cause of Run's context once SIGINT or SIGTERM came.
type interrupted struct{ sig syscall.Signal }

func (e interrupted) Error() string { return "interrupted by " + pin.SignalName(e.sig) }

// Is makes errors.Is(err, context.Canceled) true, as for any cancel.
func (e interrupted) Is(target error) bool { return target == context.Canceled }

// interruptible returns a context cancelled, with an [interrupted] cause,
// on SIGINT or SIGTERM: the verbs then stop waiting and leave the nodes as
// they are.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			// A second Ctrl-C, while multi says what it left running,
			// ends it at once.
			signal.Stop(sigs)
			cancel(interrupted{s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel(nil)
		// Not waited for: signal.Stop hands each signal to the runtime's
		// signal-mask thread and waits for it, two thread switches a
		// signal (about 0.1 ms after start's results are out, the ready
		// tail), and multi exits right after Run returns.
		go signal.Stop(sigs)
	}
}

// wasInterrupted reports whether ctx ended by SIGINT or SIGTERM.
func wasInterrupted(ctx context.Context) bool {
	var in interrupted
	return errors.As(context.Cause(ctx), &in)
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "multi",
		Usage:                "start named nodes in the background and stop them without signalling the wrong process",
		UsageText:            "multi COMMAND [flags] NODES... [-SIGNAL] [OPTIONS] [-- COMMAND ARGS...]",
		Version:              version(),
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		Description: `Each node's own process holds a lock on its pidfile for its whole life;
multi only ever signals the process the kernel names as that lock's holder,
and stopwait waits for the lock to be released, so a recycled pid or a
zombie can never fool it.

Exit codes: 0 success, 1 a node failed, 2 usage error, 130 interrupted
(Ctrl-C; the nodes are left as they are); status: 0 all running, 1 a stale
pidfile, 3 not running, 4 unknown. The manual page: multi man | man -l -`,
		Commands: []*cli.Command{
			verbStart.command(),
			verbStop.command(),
			verbStopWait.command(),
			verbKill.command(),
			verbRestart.command(),
			applyCommand(),
			scaleCommand(),
			runCommand(),
			statusCommand(),
			logsCommand(),
			forgetCommand(),
			namesCommand(),
			expandCommand(),
			showCommand(),
			getCommand(),
			completionCommand(),
			manCommand(),
			checkCommand(),
			versionCommand(),
		},
		CommandNotFound: func(c *cli.Context, name string) {
			var verbs []string
			for _, cmd := range c.App.Commands {
				if !cmd.Hidden {
					verbs = append(verbs, cmd.Name)
				}
			}
			if near := closestNames(name, verbs); len(near) > 0 {
				fmt.Fprintf(stderr, "multi: unknown command %q; did you mean %s? (see multi --help)\n", name, orList(near))
				c.App.Metadata[exitCode] = exitUsage
				return
			}
			fmt.Fprintf(stderr, "multi: unknown command %q (see multi --help)\n", name)
			c.App.Metadata[exitCode] = exitUsage
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit("multi: "+err.Error(), exitUsage)
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
	for _, cmd := range app.Commands {
		// "help" and "h" are the help command only as the first word
		// (multi help, multi h): after a verb they are node names, which
		// urfave/cli would otherwise take for each verb's own help
		// subcommand. --help and -h still show a verb's help.
		cmd.HideHelpCommand = true
		if cmd.SkipFlagParsing {
			cmd.BashComplete = complete
		}
	}
	return app
}

// vcsRevision and vcsModified are set by "make build" (-ldflags -X) from
// git, for builds where the go command records no VCS information: a git
// worktree, or GOFLAGS=-buildvcs=false.
var vcsRevision, vcsModified string

// version is the module's version from the build info, with the commit it
// was built from and whether the tree had changes ("modified").
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi, vcsRevision, vcsModified)
}

// versionOf formats bi; rev and modified stand in for the build info's
// vcs.revision and vcs.modified when it has none.
func versionOf(bi *debug.BuildInfo, rev, modified string) string {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	commit := "commit unknown: built without VCS information"
	if rev != "" {
		commit = "commit " + rev[:min(12, len(rev))]
		if modified == "true" {
			commit += ", modified"
		}
	}
	return fmt.Sprintf("%s (%s) %s", bi.Main.Version, commit, bi.GoVersion)
}
