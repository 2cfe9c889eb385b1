package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/celery"
)

// A Spec describes a set of nodes before expansion: the names as the user
// gave them and the templates of their files and command, each zero field
// with a documented default. Its nodes share one command ([Join] joins
// Specs for nodes that need different ones).
type Spec struct {
	// Names are the node names as given (w1, or w1@host), or a single count
	// ("3"). Names, Prefix and Host may use this machine's host name:
	// %h (all of it), %n (up to the first dot), %d (after it).
	Names []string
	// Prefix is put before every name given (not before counted names,
	// which take RangePrefix), as celery's --prefix.
	Prefix string
	// Host is the host part of full names; "" means this machine's host
	// name. A name given as name@host keeps its own.
	Host string
	// RangePrefix prefixes the names a count expands to; "" means
	// [DefaultRangePrefix].
	RangePrefix string

	// RunDir is the folder of default pidfiles and logfiles and of node
	// records; "" means [DefaultRunDir].
	RunDir string
	// PidFile is the pidfile template; "" means RunDir/%n.pid.
	PidFile string
	// LogFile is the logfile template; "" means RunDir/%n.log.
	LogFile string
	// NodeFiles are per-node pidfile and logfile templates (Name "pidfile"
	// or "logfile", Scope the nodes), winning over PidFile and LogFile.
	NodeFiles []Option
	// Command is the command template; each argument is expanded on its
	// own, so spaces and quotes inside an argument survive.
	Command []string
	// Options are appended to the command, each value expanded per node:
	// "-c" "10", "--loglevel=DEBUG". One with a Scope, for those nodes,
	// replaces the option of the same name given for every node.
	Options []Option
	// Dir is the working directory of the nodes and the base of relative
	// paths; "" means the current directory.
	Dir string
	// SelfLock sets [Node.SelfLock] on every node.
	SelfLock bool
	// Env sets [Node.Env] on every node: KEY=VALUE entries.
	Env []string
	// Group sets [Node.Group] on every node.
	Group string
	// After sets [Node.After] on every node: "NAME" or "NAME:CONDITION"
	// ([ParseNeed]), NAME a node's or a group's.
	After []string
	// EnvFiles sets [Node.EnvFiles] on every node, each path relative to
	// Dir.
	EnvFiles []string
	// Limits sets [Node.Limits] on every node.
	Limits Limits
	// Ready is the readiness check template of every node ([Node.Ready]);
	// a NodeFiles entry named "ready" gives some nodes their own.
	Ready string
}

// Nodes expands the spec into nodes, in the order the names were given,
// touching no file. Options are appended only to a command.
func (s Spec) Nodes() ([]Node, error) { return s.nodesFrom(1) }

// Join expands specs into one set of nodes, in order, for nodes that
// differ in command, options, environment, folder or files. Each Spec's
// nodes continue the index (%i) of those before: after three nodes, a
// count of 2 gives celery4 and celery5, Scope indexes 4 and 5. Names and
// pidfiles must differ ([ErrDuplicateName], [ErrBadTemplate]).
func Join(specs ...Spec) ([]Node, error) {
	var out []Node
	t := newTaken()
	for _, s := range specs {
		ns, err := s.nodesFrom(len(out) + 1)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if err := t.name(n); err != nil {
				return nil, err
			}
			if err := t.pidfile(n); err != nil {
				return nil, err
			}
		}
		if len(out)+len(ns) > maxNodes {
			return nil, fmt.Errorf("%w: more than %d nodes", ErrBadName, maxNodes)
		}
		out = append(out, ns...)
	}
	if len(out) == 0 {
		return nil, ErrNoNodes
	}
	return out, nil
}

// taken holds the names and pidfiles of a set's nodes, which must differ:
// each maps to the node that took it.
type taken struct{ names, pidfiles map[string]string }

func newTaken() taken { return taken{map[string]string{}, map[string]string{}} }

// name takes n's name, or says it is taken.
func (t taken) name(n Node) error {
	if _, dup := t.names[n.Name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateName, n.Name)
	}
	t.names[n.Name] = n.Name
	return nil
}

// pidfile takes n's pidfile, or names the node that has it.
func (t taken) pidfile(n Node) error {
	if other, dup := t.pidfiles[n.PidFile]; dup {
		return fmt.Errorf("%w: nodes %s and %s share the pidfile %s", ErrBadTemplate, other, n.Name, n.PidFile)
	}
	t.pidfiles[n.PidFile] = n.Name
	return nil
}

// nodesFrom expands the spec into nodes whose indexes start at first.
func (s Spec) nodesFrom(first int) ([]Node, error) {
	names, counted, err := s.names(first)
	if err != nil {
		return nil, err
	}
	host := Hostname()
	if s.Host != "" {
		if host, err = hostFormat(s.Host); err != nil {
			return nil, err
		}
	}
	prefix, err := hostFormat(s.Prefix)
	if err != nil {
		return nil, err
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("environment entry %q: want KEY=VALUE, with a KEY", kv)
		}
	}
	base := s.Dir
	if base == "" {
		if base, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	var after []Need
	for _, a := range s.After {
		nd, err := ParseNeed(a)
		if err != nil {
			return nil, err
		}
		after = append(after, nd)
	}
	var envFiles []string
	for _, f := range s.EnvFiles {
		if f == "" || strings.ContainsRune(f, 0) {
			return nil, fmt.Errorf("env file %q: want a path", f)
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(base, f)
		}
		envFiles = append(envFiles, filepath.Clean(f))
	}
	limits, err := s.Limits.checked()
	if err != nil {
		return nil, err
	}
	rundir := s.RunDir
	if rundir == "" {
		rundir = DefaultRunDir()
	}

	out := make([]Node, len(names))
	raw := make([]string, len(names))
	t := newTaken()
	for i, name := range names {
		n := Node{Index: first + i, Host: host, Dir: s.Dir, Env: s.Env, SelfLock: s.SelfLock, Group: s.Group, After: after, EnvFiles: envFiles, Limits: limits}
		if short, h, ok := strings.Cut(name, "@"); ok {
			// A full name keeps its host and takes no prefix.
			full, err := hostFormat(name)
			if err != nil {
				return nil, err
			}
			short, h, _ = strings.Cut(full, "@")
			n.Name, n.Host, raw[i] = short, h, short
		} else {
			if name, err = hostFormat(name); err != nil {
				return nil, err
			}
			n.Name, raw[i] = name, name
			if !counted {
				n.Name = prefix + name
			}
		}
		if err := CheckName(n.Name); err != nil {
			return nil, err
		}
		if err := checkHost(n.Host); err != nil {
			return nil, err
		}
		if err := t.name(n); err != nil {
			return nil, err
		}
		out[i] = n
	}

	opts := make([][]Option, len(out))
	pidT := make([]string, len(out))
	logT := make([]string, len(out))
	readyT := make([]string, len(out))
	for i := range out {
		pidT[i], logT[i], readyT[i] = s.PidFile, s.LogFile, s.Ready
		if pidT[i] == "" {
			pidT[i] = filepath.Join(escapePercent(rundir), "%n.pid")
		}
		if logT[i] == "" {
			logT[i] = filepath.Join(escapePercent(rundir), "%n.log")
		}
	}
	for _, o := range s.NodeFiles {
		idx, err := resolveScope(o, out, raw)
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			switch o.Name {
			case "pidfile":
				pidT[i] = o.Value
			case "logfile":
				logT[i] = o.Value
			case "ready":
				readyT[i] = o.Value
			default:
				return nil, fmt.Errorf("%w: --%s cannot be given per node", ErrBadScope, o.Name)
			}
		}
	}
	// Options for every node first, then per-node ones, which replace
	// them whatever the order they were given in, as in celery.
	for _, o := range s.Options {
		if o.Scope == "" {
			for i := range opts {
				opts[i] = mergeOption(opts[i], o)
			}
		}
	}
	for _, o := range s.Options {
		if o.Scope == "" {
			continue
		}
		idx, err := resolveScope(o, out, raw)
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			opts[i] = mergeOption(opts[i], o)
		}
	}

	for i := range out {
		n := &out[i]
		if n.PidFile, err = expandPath(pidT[i], *n, base); err != nil {
			return nil, err
		}
		if err := t.pidfile(*n); err != nil {
			return nil, err
		}
		if n.LogFile, err = expandPath(logT[i], *n, base); err != nil {
			return nil, err
		}
		if n.Ready, err = ExpandReady(readyT[i], *n, "--ready"); err != nil {
			return nil, err
		}
		for _, a := range s.Command {
			w, err := Expand(a, *n)
			if err != nil {
				return nil, err
			}
			n.Command = append(n.Command, w)
		}
		for _, o := range opts[i] {
			words, err := o.words(*n)
			if err != nil {
				return nil, err
			}
			n.Options = append(n.Options, words...)
		}
		n.Command = celery.Place(n.Command, n.Options)
	}
	return out, nil
}

// names returns the names as given, or the names a lone count expands
// to, numbered from first.
func (s Spec) names(first int) (names []string, counted bool, err error) {
	if len(s.Names) == 0 {
		return nil, false, ErrNoNodes
	}
	if len(s.Names) == 1 && isCount(s.Names[0]) {
		n, err := strconv.Atoi(s.Names[0])
		if err != nil || n < 1 || n > maxNodes {
			return nil, false, fmt.Errorf("%w: count %q must be 1 to %d", ErrBadName, s.Names[0], maxNodes)
		}
		prefix := s.RangePrefix
		if prefix == "" {
			prefix = DefaultRangePrefix
		}
		if prefix, err = hostFormat(prefix); err != nil {
			return nil, false, err
		}
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + strconv.Itoa(first+i)
		}
		return out, true, nil
	}
	return s.Names, false, nil
}
