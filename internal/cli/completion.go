package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// complete lists, for shell completion, the recorded nodes not yet on the
// command line, or the command's flags when the word being completed
// starts with a dash.
func complete(c *cli.Context) {
	args := c.Args().Slice()
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "-") {
		for _, f := range c.Command.Flags {
			for _, name := range f.Names() {
				if len(name) > 1 {
					fmt.Fprintln(c.App.Writer, "--"+name)
				}
			}
		}
		return
	}
	given := map[string]bool{}
	for _, a := range args {
		given[a] = true
	}
	recs, _ := nodes.ReadRecords(nodes.DefaultRunDir())
	for _, n := range recs {
		if !given[n.Name] {
			fmt.Fprintln(c.App.Writer, n.Name)
		}
	}
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
// (make install writes it to man1/multi.1).
func manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the manual page (roff)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = io.WriteString(c.App.Writer, page)
			return err
		},
	}
}
