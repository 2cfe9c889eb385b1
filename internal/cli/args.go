package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/multi-launcher/multi/nodes"
)

// ErrUsage is matched by every error [Parser.Parse] returns: the command
// line itself is wrong.
var ErrUsage = errors.New("usage")

// ErrHelp is returned by [Parser.Parse] when the command line asks for help
// (-h or --help before "--").
var ErrHelp = errors.New("help requested")

// A Parser splits a multi command line the way celery multi users write it:
// node names, multi's own flags in any order, an optional -SIGNAL, options
// for the nodes' command (celery's "worker options", per node with
// -OPT:NODES), and, after "--", the command exactly as given.
//
// # Where a word belongs
//
//   - multi's own flags (Flags) may stand anywhere before "--", as
//     --flag=value or --flag value.
//   - Other options are passed to the command. A long one takes a value only
//     with "=" (--loglevel=DEBUG), as in celery. A short one with a scope
//     (-c:1-3 10) always takes the next word as its value. A short one
//     without a scope takes the next word (not starting with '-') as its
//     value only once the node names have been given: before them it takes
//     none, so "-E w1 w2" is two nodes with -E, never one node named w2.
//   - The node names are one run of words. A word after the options that is
//     not an option's value is an error, not a silently added node.
//   - One capital letter (-Q, -E, -B, -O, -P, -S) is one of celery's
//     options, never a -SIGNAL, in every command that passes options on.
//   - An option to pass on is refused when it looks like one of multi's
//     flags ([Parser.misspelt]): a flag of another verb, or a misspelling,
//     is never passed on to the command, nor recorded.
type Parser struct {
	// Flags are multi's own long flags, by name without dashes; the value
	// says whether the flag takes a value. A flag that takes none is
	// recorded as "true".
	Flags map[string]bool
	// Short maps one-letter flags (without the dash: "q") to long names in
	// Flags; a short flag's value, if it takes one, is the next word.
	Short map[string]string
	// PerNode lists the flags of Flags that may be given per node, as
	// --pidfile:w1=PATH (celery allows --pidfile and --logfile so).
	PerNode map[string]bool
	// Signal reports whether a word such as "KILL" or "9" (the text after a
	// single dash) names a signal. Nil means no -SIGNAL is accepted.
	Signal func(string) bool
	// NoSignal refuses, as a usage error, a -SIGNAL that Signal recognises
	// (for verbs that send no signal of the user's choice), rather than
	// passing it to the command as an option.
	NoSignal bool
	// Forward accepts options multi does not own, for the nodes' command.
	// When false they are usage errors.
	Forward bool
	// Others are the long flags of multi's other verbs that this one
	// does not take, by name, each with the verbs that take it: a
	// forwarded option that is one of them, or near one, is refused.
	Others map[string][]string
}

// Args is a parsed command line.
type Args struct {
	// Names are the node names, or a count, as given.
	Names []string
	// Flags are multi's own flags given for every node, by long name
	// (Name without dashes), in order, each time it was given: --env is
	// given many times, and of others the last one wins. A flag that
	// takes no value has the value "true".
	Flags []nodes.Option
	// NodeFlags are multi's own flags given per node (Name without
	// dashes: "pidfile").
	NodeFlags []nodes.Option
	// Options are the options for the command, in order.
	Options []nodes.Option
	// Signal is the text of the -SIGNAL word without its dash; "" if none.
	Signal string
	// Command is everything after the first "--", untouched.
	Command []string
	// HasCommand reports whether "--" was given.
	HasCommand bool
}

// Parse parses args (without the program and verb names).
func (p Parser) Parse(args []string) (*Args, error) {
	a := &Args{}
	namesStarted, namesEnded := false, false
	value := func(i *int, what string) (string, error) {
		if *i+1 >= len(args) || args[*i+1] == "--" {
			return "", fmt.Errorf("%w: %s needs a value", ErrUsage, what)
		}
		*i++
		return args[*i], nil
	}
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
			spec, val, hasVal := strings.Cut(tok[2:], "=")
			name, scope, scoped := strings.Cut(spec, ":")
			if err := checkOptName(tok, name, scope, scoped); err != nil {
				return nil, err
			}
			takes, own := p.Flags[name]
			switch {
			case own && scoped:
				if !p.PerNode[name] {
					return nil, fmt.Errorf("%w: --%s cannot be given per node (%s)", ErrUsage, name, tok)
				}
				if !hasVal {
					var err error
					if val, err = value(&i, tok); err != nil {
						return nil, err
					}
				}
				a.NodeFlags = append(a.NodeFlags, nodes.Option{Name: name, Value: val, HasValue: true, Scope: scope})
			case own && !takes:
				if hasVal {
					return nil, fmt.Errorf("%w: flag --%s takes no value", ErrUsage, name)
				}
				a.flag(name, "true")
			case own:
				if !hasVal {
					var err error
					if val, err = value(&i, "flag --"+name); err != nil {
						return nil, err
					}
				}
				a.flag(name, val)
			case !p.Forward:
				return nil, p.unknown(tok, name)
			default:
				if err := p.misspelt(tok, name, true); err != nil {
					return nil, err
				}
				a.Options = append(a.Options, nodes.Option{Name: "--" + name, Value: val, HasValue: hasVal, Scope: scope})
				namesEnded = namesStarted
			}
		case strings.HasPrefix(tok, "-"):
			word := tok[1:]
			if long, ok := p.Short[word]; ok {
				if !p.Flags[long] {
					a.flag(long, "true")
					continue
				}
				v, err := value(&i, "flag "+tok)
				if err != nil {
					return nil, err
				}
				a.flag(long, v)
				continue
			}
			if p.Signal != nil && p.Signal(word) {
				if p.NoSignal {
					return nil, fmt.Errorf("%w: %s: this command takes no signal", ErrUsage, tok)
				}
				if a.Signal != "" {
					return nil, fmt.Errorf("%w: two signals given (-%s and %s)", ErrUsage, a.Signal, tok)
				}
				a.Signal = word
				continue
			}
			if p.Signal != nil && !p.NoSignal && looksLikeSignal(word) && !(p.Forward && celeryLetter(word)) {
				return nil, fmt.Errorf("%w: %s is neither a flag nor a signal", ErrUsage, tok)
			}
			if !p.Forward {
				name, _, _ := strings.Cut(word, ":")
				name, _, _ = strings.Cut(name, "=")
				return nil, p.unknown(tok, name)
			}
			name, scope, scoped := strings.Cut(word, ":")
			if err := checkOptName(tok, name, scope, scoped); err != nil {
				return nil, err
			}
			if bare, _, _ := strings.Cut(name, "="); len(bare) > 1 {
				if err := p.misspelt(tok, bare, false); err != nil {
					return nil, err
				}
			}
			o := nodes.Option{Name: "-" + name, Scope: scope}
			next := i+1 < len(args) && args[i+1] != "--" && !strings.HasPrefix(args[i+1], "-")
			if scoped {
				// celery's -c:1-3 10 always has a value.
				var err error
				if o.Value, err = value(&i, tok); err != nil {
					return nil, err
				}
				o.HasValue = true
			} else if namesStarted && next {
				i++
				o.Value, o.HasValue = args[i], true
			}
			a.Options = append(a.Options, o)
			namesEnded = namesStarted
		default:
			if namesEnded {
				return nil, fmt.Errorf("%w: %q after the options: node names go together, before or after options, "+
					"and a value goes with its option (-c=%s or -c %s after the names)", ErrUsage, tok, tok, tok)
			}
			a.Names = append(a.Names, tok)
			namesStarted = true
		}
	}
	return a, nil
}

// flag records multi's own flag name, given for every node with value.
func (a *Args) flag(name, value string) {
	a.Flags = append(a.Flags, nodes.Option{Name: name, Value: value, HasValue: true})
}

// Flag returns the value of multi's own flag name (its long name) as last
// given for every node, and "" if it was not.
func (a *Args) Flag(name string) string {
	for i := len(a.Flags) - 1; i >= 0; i-- {
		if a.Flags[i].Name == name {
			return a.Flags[i].Value
		}
	}
	return ""
}

// unknown is the usage error for an option a command that runs no command
// cannot use (tok as given, name without dashes): it names the closest of
// the command's own flags, if one is close, so that a misspelt --timeout
// is never taken for something else.
func (p Parser) unknown(tok, name string) error {
	if best := p.closest(name); best != "" {
		return fmt.Errorf("%w: unknown flag %s (did you mean %s?)", ErrUsage, tok, best)
	}
	return fmt.Errorf("%w: unknown flag %s (options for the nodes' command only go with start, restart, show and get)", ErrUsage, tok)
}

// closest returns the flag of p, as written ("--timeout", "-q"), nearest
// to name by edit distance (a swap of two letters counts one), or a flag
// name starts with; "" if none is near enough to be a likely typo.
func (p Parser) closest(name string) string {
	best, bestD := "", 0
	consider := func(flag, written string) {
		d := editDistance(strings.ToLower(name), flag)
		limit := 1
		if len(name) == 1 || len(flag) == 1 {
			limit = 0 // one letter is a typo for any other: only -F for -f
		} else if len(flag) >= 4 {
			limit = 2
		}
		if len(name) >= 2 && strings.HasPrefix(flag, name) {
			d = 1 // an abbreviation
		}
		if d <= limit && (best == "" || d < bestD || d == bestD && written < best) {
			best, bestD = written, d
		}
	}
	for flag := range p.Flags {
		consider(flag, "--"+flag)
	}
	for short := range p.Short {
		if len(name) == 1 {
			consider(short, "-"+short)
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func checkOptName(tok, name, scope string, scoped bool) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s has no option name", ErrUsage, tok)
	case scoped && scope == "":
		return fmt.Errorf("%w: %s has an empty node list after ':'", ErrUsage, tok)
	case strings.Contains(scope, ":"):
		return fmt.Errorf("%w: %s has more than one ':'", ErrUsage, tok)
	}
	return nil
}

// looksLikeSignal reports whether a word after a dash is all capitals or
// all digits, so that a mistyped -SIGNAL is an error rather than an option
// passed along unnoticed.
func looksLikeSignal(word string) bool {
	if word == "" {
		return false
	}
	upper, digit := true, true
	for _, r := range word {
		upper = upper && r >= 'A' && r <= 'Z'
		digit = digit && r >= '0' && r <= '9'
	}
	return upper || digit
}
