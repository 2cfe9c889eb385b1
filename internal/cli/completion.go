package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// complete lists, for shell completion, the recorded nodes not yet on the
// command line (of the rundir it names, if it does), or the command's
// flags when the word being completed starts with a dash. The shell
// passes the words before the cursor, and the word being completed only
// when it starts with a dash, so a last word that is a whole flag
// ("--group", "--rundir=DIR") is taken as done: nodes come next.
func complete(c *cli.Context) {
	args := joinEquals(c.Args().Slice())
	rundir := nodes.DefaultRunDir()
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--rundir="); ok {
			rundir = v
		} else if a == "--rundir" && i+1 < len(args) {
			rundir = args[i+1]
		}
	}
	if n := len(args); n > 0 {
		last := args[n-1]
		if last == "--rundir" || strings.HasSuffix(last, "=") || last == "--pidfile" || last == "--logfile" {
			return // a value comes next: the shell completes file names
		}
		if strings.HasPrefix(last, "-") && !strings.Contains(last, "=") && !isFlag(c, last) {
			for _, f := range c.Command.Flags {
				for _, name := range f.Names() {
					if len(name) > 1 {
						fmt.Fprintln(c.App.Writer, "--"+name)
					}
				}
			}
			return
		}
	}
	given := map[string]bool{}
	for _, a := range args {
		given[a] = true
	}
	recs, _ := record.ReadAll(rundir)
	for _, n := range recs {
		if !given[n.Name] {
			fmt.Fprintln(c.App.Writer, n.Name)
		}
	}
}

// joinEquals puts back together what bash splits at '=' (it is in
// COMP_WORDBREAKS): "--rundir", "=", "DIR" is "--rundir=DIR".
func joinEquals(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "=" && len(out) > 0 {
			out[len(out)-1] += "="
			if i+1 < len(args) {
				i++
				out[len(out)-1] += args[i]
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// isFlag reports whether word is a whole flag of the command: "--group".
func isFlag(c *cli.Context, word string) bool {
	for _, f := range c.Command.Flags {
		for _, name := range f.Names() {
			if word == "--"+name || len(name) == 1 && word == "-"+name {
				return true
			}
		}
	}
	return false
}

// completionCommand prints the shell code that wires completion to
// urfave/cli's --generate-bash-completion.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print shell completion code for bash or zsh",
		UsageText: "multi completion bash|zsh",
		Description: `Commands, flags and recorded node names complete.

   source <(multi completion bash)                 # in ~/.bashrc
   multi completion zsh > "${fpath[1]}/_multi"     # zsh`,
		Action: func(c *cli.Context) error {
			script, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}[c.Args().First()]
			if !ok || c.NArg() != 1 {
				return usage(c, errors.New("say bash or zsh"))
			}
			_, err := io.WriteString(c.App.Writer, script)
			return err
		},
	}
}

const bashCompletion = `# bash completion for multi
_multi_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" opts
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _multi_complete multi
`

const zshCompletion = `#compdef multi
_multi() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} "$cur" --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _multi multi
`

// manCommand prints the manual page, generated from the app's definition
// (manPage; make install writes it to man1/multi.1).
func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the manual page (roff): multi man | man -l -",
		Action: func(c *cli.Context) error {
			_, err := io.WriteString(c.App.Writer, manPage(c.App))
			return err
		},
	}
}

// manSections are the manual page's sections that manPage does not
// generate from the commands.
const manSections = `
.SH EXIT STATUS
.TP
.B 0
every node is as asked (a node already running counts as started, one not running as stopped)
.TP
.B 1
some node failed (get: the node is not in the set; forget: a node still runs)
.TP
.B 2
usage error: a bad flag, node name, template or value; nothing was done
.TP
.B 4
stop, stopwait, kill: a name given has neither record nor pidfile (an unknown node); nothing is done to it
.TP
.B 130
interrupted by Ctrl-C (143: by SIGTERM); the nodes are left as they are and those still running are named
.PP
status follows LSB instead, the worst node deciding: 0 every node runs, 1 some node died without multi, its pidfile
left (stale), or a live multi run gave up on it (fatal), 3 some node is not running (one a plain stop ended, or one
stopping, included), 4 unknown (a pidfile could not be read or is locked but not as a node locks it, a node is lost or its
pidfile held by another process than its record names (mismatch),
or a name has neither record nor pidfile: an unknown node), 150 some node is lingering (its lock free, processes of
its tree left: stopwait cleans them).
.PP
run follows tini: the first node that exits on its own decides (its exit code, or 128 plus the signal that ended
it: 137 for SIGKILL; 127 its program not found, 126 not executable); after a requested stop, 0 when every node
exited 0 or by the stop signal, 1 when one could not be stopped through its pidfile.

.SH ENVIRONMENT
.TP
.B MULTI_RUNDIR
the rundir when --rundir is not given
.TP
.B XDG_RUNTIME_DIR
the default rundir is $XDG_RUNTIME_DIR/multi (not as root)
.TP
.B NO_COLOR
no colours; nor with TERM=dumb
.TP
.B TERM
dumb: no colours
.TP
.BR MULTI_PIDFILE ", " MULTI_PIDFILE_FD ", " MULTI_NODE
set for each node: its pidfile, the descriptor that holds its lock (unless --self-lock), its full name
.PP
The nodes get multi's own environment.

.SH FILES
.TP
.I RUNDIR/NAME.pid
the pidfile: the node's pid, locked (POSIX fcntl write lock) by the node's own process for its whole life
.TP
.I RUNDIR/NAME.log
the logfile: the node's stdout and stderr, appended
.TP
.I RUNDIR/NAME.node
the node's record: command, files, folder, start time; used by restart and by the verbs
without names; removed by forget
.PP
RUNDIR is /run/multi as root, else $XDG_RUNTIME_DIR/multi, else $TMPDIR/multi-UID.

.SH TEMPLATE LETTERS
In --pidfile, --logfile, the command and its options (celery's %-letters):
.TP
.BR %n ", " %N
the short name: w1
.TP
.BR %h ", " %p
the full name: w1@host
.TP
.B %d
the host part: host
.TP
.B %i
the 1-based index: 1
.TP
.B %I
empty (celery's index of the main process; keeps %n%I.log working)
.TP
.B %%
a literal %

.SH EXAMPLES
.EX
multi start w1 w2 w3 -- sleep 300
multi start 3 --range-prefix=web --pidfile=/run/app/%n.pid -- app --port=80%i
multi start A B C D -c:1 4 -c:2-4 8 -- worker --name=%h
multi status
multi stopwait --timeout=30s
multi restart w2
multi stop w1 -HUP
multi forget w3
.EE
`
