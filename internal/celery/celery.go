// Package celery knows the little of celery's command line that multi
// needs for celery multi's form to work with celery 5: which word of a
// command is celery, and where celery's global options go.
package celery

import (
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Settle is the settle window of a start of celery nodes given none: a
// celery worker given an option or app it cannot use exits about a
// second after its start, once Python has imported celery.
const Settle = 3 * time.Second

// celery 5's global options: celery's worker rejects them after the
// subcommand (celery worker -A proj), so, as celery multi does, they go
// right after the celery word (celery -A proj worker). Those of valued
// take a value: "--app=proj", or the next word ("-A proj").
var (
	valued = []string{"-A", "--app", "-b", "--broker", "--result-backend", "--loader", "--config", "--workdir"}
	flags  = []string{"-C", "--no-color", "-q", "--quiet", "--skip-checks"}
	// subcommands are those a node runs: the celery word is the one
	// right before the first of them.
	subcommands = []string{"worker", "beat", "events", "flower"}
)

// Is reports whether command runs celery: a word celery (or a path
// ending in /celery) before a subcommand: worker, beat, events, flower.
func Is(command []string) bool {
	return word(command) >= 0
}

// Place returns base, a command, with the option words opts placed: at
// its end, but for a celery command celery 5's global options among
// them (-A/--app, -b/--broker, --result-backend, --loader, --config,
// --workdir, -C/--no-color, -q/--quiet, --skip-checks) right after the
// celery word, in the order given, as celery multi puts them.
func Place(base, opts []string) []string {
	if len(base) == 0 {
		return nil
	}
	k := word(base)
	global, rest := split(opts)
	if k < 0 || len(global) == 0 {
		return slices.Concat(base, opts)
	}
	return slices.Concat(base[:k+1], global, base[k+1:], rest)
}

// Base is command without the option words opts: the command given,
// which [Place] placed opts in. A command that is not its base with opts
// placed (written otherwise) is taken to end in them.
func Base(command, opts []string) []string {
	if len(opts) > len(command) {
		return slices.Clone(command)
	}
	global, rest := split(opts)
	if k := word(command); k >= 0 && len(global) > 0 && k+1+len(global)+len(rest) <= len(command) {
		base := slices.Concat(command[:k+1], command[k+1+len(global):len(command)-len(rest)])
		if slices.Equal(Place(base, opts), command) {
			return base
		}
	}
	return slices.Clone(command[:len(command)-len(opts)])
}

// word returns the index of the celery word of command: the word celery
// (or a path to it) nearest before the first celery subcommand; -1 when
// there is none.
func word(command []string) int {
	for i, w := range command {
		if !slices.Contains(subcommands, w) {
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

// split splits option words into celery's global options and the rest,
// each in the order given, reading them as celery reads its arguments: a
// valued option without "=" takes the next word.
func split(opts []string) (global, rest []string) {
	for i := 0; i < len(opts); i++ {
		w := opts[i]
		name, _, joined := strings.Cut(w, "=")
		switch {
		case slices.Contains(valued, name) && (joined || i+1 < len(opts)):
			global = append(global, w)
			if !joined {
				i++
				global = append(global, opts[i])
			}
		case slices.Contains(flags, w):
			global = append(global, w)
		default:
			rest = append(rest, w)
		}
	}
	return global, rest
}
