package nodes

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUsage is matched by every error [Parser.Parse] returns: the command
// line itself is wrong.
var ErrUsage = errors.New("usage")

// ErrHelp is returned by [Parser.Parse] when the command line asks for help
// (-h or --help before "--").
var ErrHelp = errors.New("help requested")

// A Parser splits a multi command line the way celery multi users write
// it: node names and multi's own flags in any order, an optional -SIGNAL,
// and, after "--", the node's command exactly as given.
type Parser struct {
	// Flags are multi's own long flags, by name without dashes; the value
	// says whether the flag takes a value (--pidfile=X or --pidfile X).
	// A flag that takes none is recorded as "true".
	Flags map[string]bool
	// Short maps one-letter flags (without the dash) to their long name.
	Short map[string]string
	// Signal reports whether a word such as "KILL" or "9" (the text after
	// a single dash) names a signal. Nil means no -SIGNAL is accepted.
	Signal func(string) bool
}

// Args is a parsed command line.
type Args struct {
	// Names are the positional words before "--": node names or a count.
	Names []string
	// Flags holds the flags given, by long name; later ones win.
	Flags map[string]string
	// Signal is the text of the -SIGNAL word without its dash; "" if none.
	Signal string
	// Command is everything after the first "--", untouched.
	Command []string
	// HasCommand reports whether "--" was given.
	HasCommand bool
}

// Parse parses args (without the program and verb names).
func (p Parser) Parse(args []string) (*Args, error) {
	a := &Args{Flags: map[string]string{}}
	for i := 0; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--":
			a.Command, a.HasCommand = args[i+1:], true
			return a, nil
		case tok == "-":
			return nil, fmt.Errorf("%w: a lone '-' is neither a flag nor a node name", ErrUsage)
		case tok == "-h" || tok == "--help":
			return nil, ErrHelp
		case strings.HasPrefix(tok, "--"):
			name, val, hasVal := strings.Cut(tok[2:], "=")
			takes, ok := p.Flags[name]
			if !ok {
				return nil, fmt.Errorf("%w: unknown flag --%s", ErrUsage, name)
			}
			if !takes {
				if hasVal {
					return nil, fmt.Errorf("%w: flag --%s takes no value", ErrUsage, name)
				}
				val = "true"
			} else if !hasVal {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("%w: flag --%s needs a value", ErrUsage, name)
				}
				i++
				val = args[i]
			}
			a.Flags[name] = val
		case strings.HasPrefix(tok, "-"):
			word := tok[1:]
			if long, ok := p.Short[word]; ok {
				// Short flags take no value of their own here.
				if p.Flags[long] {
					if i+1 >= len(args) {
						return nil, fmt.Errorf("%w: flag -%s needs a value", ErrUsage, word)
					}
					i++
					a.Flags[long] = args[i]
				} else {
					a.Flags[long] = "true"
				}
				continue
			}
			if p.Signal == nil || !p.Signal(word) {
				if p.Signal != nil {
					return nil, fmt.Errorf("%w: %s is neither a flag nor a signal", ErrUsage, tok)
				}
				return nil, fmt.Errorf("%w: unknown flag %s", ErrUsage, tok)
			}
			if a.Signal != "" {
				return nil, fmt.Errorf("%w: two signals given (-%s and %s)", ErrUsage, a.Signal, tok)
			}
			a.Signal = word
		default:
			a.Names = append(a.Names, tok)
		}
	}
	return a, nil
}
