package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/multi-launcher/multi/nodes"
)

// A group of the project file ([group.NAME] in multi.toml) into the Spec
// of its nodes.

// limits are the group's limits, each key checked as its flag is.
func (g groupKeys) limits() (nodes.Limits, error) {
	var l nodes.Limits
	for _, k := range []struct {
		key, name string
		v         any
	}{{"limit_nofile", "nofile", g.LimitNofile}, {"limit_nproc", "nproc", g.LimitNproc}, {"limit_core", "core", g.LimitCore}, {"limit_as", "as", g.LimitAS},
		{"memory_max", "memory_max", g.MemoryMax}, {"memory_high", "memory_high", g.MemoryHigh}, {"cpu_max", "cpu_max", g.CPUMax}, {"pids_max", "pids_max", g.PidsMax},
		{"log_max_size", "log_max_size", g.LogMaxSize}, {"log_keep", "log_keep", g.LogKeep}} {
		switch v := k.v.(type) {
		case nil:
		case string, int64:
			if err := l.Set(k.name, fmt.Sprint(v)); err != nil {
				return l, fmt.Errorf("%s: %w", k.key, err)
			}
		default:
			return l, fmt.Errorf("%s: want a number or a string, not %v", k.key, nodes.Printable(fmt.Sprint(v)))
		}
	}
	return l, nil
}

// groupSpec is the Spec of group name's nodes.
func (pf *projectFile) groupSpec(name string, g groupKeys) (nodes.Spec, error) {
	s := nodes.Spec{Group: name, Prefix: g.Prefix, Host: g.Hostname, RangePrefix: g.RangePrefix,
		PidFile: pf.path(g.PidFile), LogFile: pf.path(g.LogFile), SelfLock: g.SelfLock, Ready: g.Ready,
		After: g.After, Dir: pf.Dir}
	if g.Dir != "" {
		s.Dir = pf.path(g.Dir)
	}
	switch {
	case len(g.Names) > 0 && g.Count > 0:
		return s, errors.New("names and count both given: give one")
	case g.Count > 0:
		s.Names = []string{fmt.Sprint(g.Count)}
		if s.RangePrefix == "" {
			s.RangePrefix = name
		}
	case g.Count < 0:
		return s, fmt.Errorf("count %d: want a positive number", g.Count)
	case len(g.Names) > 0:
		s.Names = g.Names
	default:
		s.Names = []string{name}
	}
	var err error
	if s.Command, err = stringOrList("command", g.Command, nodes.Words); err != nil {
		return s, err
	}
	if len(s.Command) == 0 {
		return s, errors.New("no command")
	}
	if err := checkCommandWord(s.Command, nil); err != nil {
		return s, err
	}
	if len(g.Options) > 0 {
		// The words a command line gives: "-c:1-2", "4". A name first, so
		// that a short option takes the next word as its value.
		a, err := Parser{Forward: true}.Parse(append([]string{name}, g.Options...))
		if err != nil {
			return s, fmt.Errorf("options: %w", err)
		}
		if len(a.Names) > 1 || a.HasCommand || len(a.Flags) > 0 {
			return s, fmt.Errorf("options: %q is not an option for the command", nodes.Printable(strings.Join(g.Options, " ")))
		}
		s.Options = a.Options
	}
	keys := make([]string, 0, len(g.Env))
	for k := range g.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+g.Env[k])
	}
	files, err := stringOrList("env_file", g.EnvFile, func(s string) ([]string, error) { return []string{s}, nil })
	if err != nil {
		return s, err
	}
	for _, f := range files {
		s.EnvFiles = append(s.EnvFiles, pf.path(f))
	}
	for _, per := range []struct {
		name string
		m    map[string]string
		path bool
	}{{"ready", g.ReadyFor, false}, {"pidfile", g.PidFileFor, true}, {"logfile", g.LogFileFor, true}} {
		scopes := make([]string, 0, len(per.m))
		for scope := range per.m {
			scopes = append(scopes, scope)
		}
		slices.Sort(scopes) // the map lost the file's order; one order every time
		for _, scope := range scopes {
			v := per.m[scope]
			if per.path {
				v = pf.path(v)
			}
			s.NodeFiles = append(s.NodeFiles, nodes.Option{Name: per.name, Value: v, HasValue: true, Scope: scope})
		}
	}
	if g.KillMode != "" {
		var f flags
		if err := setKillMode(&f, g.KillMode); err != nil {
			return s, fmt.Errorf("kill_mode: %w", err)
		}
	}
	if s.Limits, err = g.limits(); err != nil {
		return s, err
	}
	return s, nil
}

// stringOrList is a key given as a string (split) or a list of strings.
func stringOrList(key string, v any, split func(string) ([]string, error)) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return split(v)
	case []any:
		out := make([]string, len(v))
		for i, w := range v {
			s, ok := w.(string)
			if !ok {
				return nil, fmt.Errorf("%s: item %d is not a string", key, i+1)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a string or a list of strings", key)
}
