package nodes

import (
	"fmt"
	"strconv"
	"strings"
)

// An Option is an option for the nodes' command, or a per-node flag of
// multi's own (Spec.NodeFiles), as given on the command line.
type Option struct {
	// Name is the option with its dashes: "-c", "--loglevel".
	Name string
	// Value is its value, if HasValue.
	Value    string
	HasValue bool
	// Scope is the node list after ':' ("1-3", "w1,w2", "w1@host"), of
	// indexes ([Node.Index]) or names; "" means every node.
	Scope string
}

// resolveScope returns the positions in ns of the nodes an option's scope
// names: a comma list of their indexes ([Node.Index], 1-based), ranges of
// them (2-4), short names, names as given before any prefix, or full
// names. Unlike celery, indexes and ranges work for named nodes too, and a
// scope naming no node is an error.
func resolveScope(o Option, ns []Node, raw []string) ([]int, error) {
	var idx []int
	first, last := ns[0].Index, ns[len(ns)-1].Index
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s in %s", ErrBadScope, fmt.Sprintf(format, a...), o.display())
	}
	for _, part := range strings.Split(o.Scope, ",") {
		if part == "" {
			return nil, bad("empty entry")
		}
		if lo, hi, isRange := strings.Cut(part, "-"); isCount(part) || (isRange && isCount(lo) && isCount(hi)) {
			if !isRange {
				hi = lo
			}
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			switch {
			case errA != nil || errB != nil || a < 1 || b < 1:
				return nil, bad("index %s below 1 (indexes start at 1)", part)
			case a < first || b < first || a > last || b > last:
				return nil, bad("index %s out of range %d-%d", part, first, last)
			case a > b:
				return nil, bad("range %s runs backwards", part)
			}
			for i := a; i <= b; i++ {
				idx = append(idx, i-first)
			}
			continue
		}
		found := false
		for i, n := range ns {
			if part == n.Name || part == raw[i] || part == n.FullName() {
				idx = append(idx, i)
				found = true
			}
		}
		if !found {
			return nil, bad("no node %q", part)
		}
	}
	return idx, nil
}

func (o Option) display() string {
	s := o.Name
	if o.Scope != "" {
		s += ":" + o.Scope
	}
	return s
}

// mergeOption adds o to a node's options: it replaces an option of the
// same name in place, or goes at the end.
func mergeOption(opts []Option, o Option) []Option {
	for i := range opts {
		if opts[i].Name == o.Name {
			opts[i] = o
			return opts
		}
	}
	return append(opts, o)
}

// words formats an option for a node's argv: "--name=value", or "-c"
// "value" as two words, or the bare name.
func (o Option) words(n Node) ([]string, error) {
	if !o.HasValue {
		return []string{o.Name}, nil
	}
	v, err := Expand(o.Value, n)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(o.Name, "--") {
		return []string{o.Name + "=" + v}, nil
	}
	return []string{o.Name, v}, nil
}
