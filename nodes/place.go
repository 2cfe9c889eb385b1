package nodes

import (
	"path/filepath"
	"slices"
	"strings"
)

// celery 5's global options: celery's worker rejects them after the
// subcommand (celery worker -A proj), so, as celery multi does, they go
// right after the celery word (celery -A proj worker). Those of valued
// take a value: "--app=proj", or the next word ("-A proj").
var (
	celeryValued = []string{"-A", "--app", "-b", "--broker", "--result-backend", "--loader", "--config", "--workdir"}
	celeryFlags  = []string{"-C", "--no-color", "-q", "--quiet", "--skip-checks"}
	// celerySubcommands are those a node runs: the celery word is the one
	// right before the first of them.
	celerySubcommands = []string{"worker", "beat", "events", "flower"}
)

// WithOptions returns n with opts, the words of options for its command,
// in place of those it has: its Command is the command it was given, then
// opts at the end, as [Spec.Nodes] places them. For a celery command
// (a word celery, or a path ending in /celery, before a subcommand:
// worker, beat, events, flower) celery 5's global options among opts
// (-A/--app, -b/--broker, --result-backend, --loader, --config,
// --workdir, -C/--no-color, -q/--quiet, --skip-checks) go right after the
// celery word instead, in the order given, as celery multi puts them.
func (n Node) WithOptions(opts []string) Node {
	base := n.baseCommand()
	n.Options = slices.Clone(opts)
	n.Command = placeOptions(base, n.Options)
	return n
}

// Celery reports whether n's command runs celery: a word celery (or a
// path ending in /celery) before a subcommand: worker, beat, events,
// flower.
func (n Node) Celery() bool {
	return celeryWord(n.Command) >= 0
}

// baseCommand is n's Command without its Options: the command given.
// A Command that is not its base with its Options placed (a record
// written otherwise) is taken to end in them.
func (n Node) baseCommand() []string {
	c, o := n.Command, n.Options
	if len(o) > len(c) {
		return slices.Clone(c)
	}
	hoisted, rest := splitGlobal(o)
	if k := celeryWord(c); k >= 0 && len(hoisted) > 0 && k+1+len(hoisted)+len(rest) <= len(c) {
		base := slices.Concat(c[:k+1], c[k+1+len(hoisted):len(c)-len(rest)])
		if slices.Equal(placeOptions(base, o), c) {
			return base
		}
	}
	return slices.Clone(c[:len(c)-len(o)])
}

// placeOptions is base with the option words opts placed (see
// [Node.WithOptions]).
func placeOptions(base, opts []string) []string {
	if len(base) == 0 {
		return nil
	}
	k := celeryWord(base)
	hoisted, rest := splitGlobal(opts)
	if k < 0 || len(hoisted) == 0 {
		return slices.Concat(base, opts)
	}
	return slices.Concat(base[:k+1], hoisted, base[k+1:], rest)
}

// celeryWord returns the index of the celery word of command: the word
// celery (or a path to it) nearest before the first celery subcommand;
// -1 when there is none.
func celeryWord(command []string) int {
	for i, w := range command {
		if !slices.Contains(celerySubcommands, w) {
			continue
		}
		for k := i - 1; k >= 0; k-- {
			if filepath.Base(command[k]) == "celery" {
				return k
			}
		}
		return -1
	}
	return -1
}

// splitGlobal splits option words into celery's global options and the
// rest, each in the order given, reading them as celery reads its
// arguments: a valued option without "=" takes the next word.
func splitGlobal(opts []string) (global, rest []string) {
	for i := 0; i < len(opts); i++ {
		w := opts[i]
		name, _, joined := strings.Cut(w, "=")
		switch {
		case slices.Contains(celeryValued, name) && (joined || i+1 < len(opts)):
			global = append(global, w)
			if !joined {
				i++
				global = append(global, opts[i])
			}
		case slices.Contains(celeryFlags, w):
			global = append(global, w)
		default:
			rest = append(rest, w)
		}
	}
	return global, rest
}
