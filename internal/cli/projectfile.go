package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// The project file: multi.toml (or a Procfile) in the working folder or
// the nearest folder above it holding one, found as git finds .git. It
// describes the project's groups of nodes; a verb given no names and no
// command acts on its nodes, and a name of one of its groups or nodes
// selects those. Flags given on the command line win over its keys.
const (
	projectFileName = "multi.toml"
	procfileName    = "Procfile"
	projectFileMax  = 1 << 20
)

// A projectFile is a project file as read.
type projectFile struct {
	// Path is the file's absolute path; Dir its folder, the project's.
	Path, Dir string
	// RunDir is the rundir key, made absolute; "" when not given.
	RunDir string
	// Settle, ReadyTimeout, StopTimeout and LockTimeout are 0 when not
	// given.
	Settle, ReadyTimeout, StopTimeout, LockTimeout time.Duration
	// OnExit is run's policy, "" when not given; Backoff, RestartWindow
	// and MaxRestarts its restarts' (0 when not given).
	OnExit                 string
	Backoff, RestartWindow time.Duration
	MaxRestarts            int
	// Groups are the groups in the order the file gives them.
	Groups []projectGroup
}

// A projectGroup is one [group.NAME] table: the Spec of its nodes.
type projectGroup struct {
	Name     string
	Spec     nodes.Spec
	KillMode string
}

// fileKeys and groupKeys are the keys the file may have: any other is
// refused, with the nearest as a hint.
type fileKeys struct {
	RunDir        string               `toml:"rundir"`
	Settle        any                  `toml:"settle"` // a duration ("10s") or seconds
	ReadyTimeout  any                  `toml:"ready_timeout"`
	StopTimeout   any                  `toml:"stop_timeout"`
	LockTimeout   any                  `toml:"lock_timeout"`
	OnExit        string               `toml:"on_exit"`
	Backoff       any                  `toml:"backoff"`
	RestartWindow any                  `toml:"restart_window"`
	MaxRestarts   int                  `toml:"max_restarts"`
	Group         map[string]groupKeys `toml:"group"`
}

type groupKeys struct {
	Command     any               `toml:"command"` // a string (split as a shell would, without one) or a list
	Names       []string          `toml:"names"`
	Count       int               `toml:"count"`
	Prefix      string            `toml:"prefix"`
	RangePrefix string            `toml:"range_prefix"`
	Hostname    string            `toml:"hostname"`
	Options     []string          `toml:"options"`
	Env         map[string]string `toml:"env"`
	EnvFile     any               `toml:"env_file"` // a path or a list
	Dir         string            `toml:"dir"`
	Ready       string            `toml:"ready"`
	KillMode    string            `toml:"kill_mode"`
	PidFile     string            `toml:"pidfile"`
	LogFile     string            `toml:"logfile"`
	// ReadyFor, PidFileFor and LogFileFor give some nodes their own, as
	// --ready:w1=CHECK does: { "w1" = "...", "2-3" = "..." }.
	ReadyFor   map[string]string `toml:"ready_for"`
	PidFileFor map[string]string `toml:"pidfile_for"`
	LogFileFor map[string]string `toml:"logfile_for"`
	SelfLock   bool              `toml:"self_lock"`
	After      []string          `toml:"after"`
	// The nodes' limits, as the flags of those names give them: a
	// number, or a string ("1024:4096", "512M", "50%", "max").
	LimitNofile any `toml:"limit_nofile"`
	LimitNproc  any `toml:"limit_nproc"`
	LimitCore   any `toml:"limit_core"`
	LimitAS     any `toml:"limit_as"`
	MemoryMax   any `toml:"memory_max"`
	MemoryHigh  any `toml:"memory_high"`
	CPUMax      any `toml:"cpu_max"`
	PidsMax     any `toml:"pids_max"`
	LogMaxSize  any `toml:"log_max_size"`
	LogKeep     any `toml:"log_keep"`
}

// findProjectFile returns the project file of the folder wd (multi.toml,
// else a Procfile, in wd or the nearest folder above holding one), read;
// nil when there is none. A file found that cannot be read or is wrong
// is an error naming it: nothing is done.
func findProjectFile(wd string) (*projectFile, error) {
	for dir := wd; ; dir = filepath.Dir(dir) {
		for _, name := range []string{projectFileName, procfileName} {
			path := filepath.Join(dir, name)
			if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return readProjectFile(path)
		}
		if dir == filepath.Dir(dir) {
			return nil, nil
		}
	}
}

// readProjectFile reads the project file at path: multi.toml's keys, or
// a Procfile's lines.
func readProjectFile(path string) (*projectFile, error) {
	b, err := safefs.ReadFile(path, projectFileMax)
	if err != nil {
		return nil, fmt.Errorf("project file %w", err)
	}
	path, _ = filepath.Abs(path)
	pf := &projectFile{Path: path, Dir: filepath.Dir(path)}
	if filepath.Base(path) == procfileName {
		err = pf.readProcfile(b)
	} else {
		err = pf.readTOML(b)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, nil
}

// readProcfile reads foreman's format: "name: command" per line, each a
// group of one node, its command run by /bin/sh as foreman does.
func (pf *projectFile) readProcfile(b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, projectFileMax+1)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, command, ok := strings.Cut(text, ":")
		name, command = strings.TrimSpace(name), strings.TrimSpace(command)
		if !ok || command == "" {
			return fmt.Errorf("line %d: want NAME: COMMAND, not %q", line, nodes.Printable(text))
		}
		if err := pf.addGroup(name, nodes.Spec{Names: []string{name}, Command: []string{"/bin/sh", "-c", command}}, ""); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	if len(pf.Groups) == 0 {
		return errors.New("no processes in it")
	}
	return sc.Err()
}

// readTOML reads multi.toml.
func (pf *projectFile) readTOML(b []byte) error {
	var k fileKeys
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&k)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("line %d: %s", pe.Position.Line, pe.Message)
		}
		return err
	}
	if un := md.Undecoded(); len(un) > 0 {
		return unknownKey(un[0])
	}
	if k.RunDir != "" {
		pf.RunDir = pf.path(k.RunDir)
	}
	for _, d := range []struct {
		key string
		v   any
		to  *time.Duration
	}{{"settle", k.Settle, &pf.Settle}, {"ready_timeout", k.ReadyTimeout, &pf.ReadyTimeout}, {"stop_timeout", k.StopTimeout, &pf.StopTimeout}, {"lock_timeout", k.LockTimeout, &pf.LockTimeout},
		{"backoff", k.Backoff, &pf.Backoff}, {"restart_window", k.RestartWindow, &pf.RestartWindow}} {
		if d.v == nil {
			continue
		}
		s := fmt.Sprint(d.v) // a string, or a number of seconds
		if d.key == "settle" && (s == "0" || s == "0s") {
			*d.to = -1 // no window, as --settle=0
			continue
		}
		v, err := parseTimeout(d.key, s)
		if err != nil {
			return err
		}
		*d.to = v
	}
	if k.OnExit != "" {
		var f flags
		if err := setOnExit(&f, k.OnExit); err != nil {
			return fmt.Errorf("on_exit: %w", err)
		}
		pf.OnExit = k.OnExit
	}
	if k.MaxRestarts < 0 {
		return fmt.Errorf("max_restarts %d: want 0 (no limit) or more", k.MaxRestarts)
	}
	pf.MaxRestarts = k.MaxRestarts
	if len(k.Group) == 0 {
		return errors.New("no [group.NAME] table in it: a project file describes at least one group of nodes")
	}
	// The groups in the file's order, which the map lost.
	for _, key := range md.Keys() {
		if len(key) != 2 || key[0] != "group" {
			continue
		}
		g := k.Group[key[1]]
		spec, err := pf.groupSpec(key[1], g)
		if err != nil {
			return fmt.Errorf("group %s: %w", nodes.Printable(key[1]), err)
		}
		if err := pf.addGroup(key[1], spec, g.KillMode); err != nil {
			return err
		}
	}
	return nil
}

// unknownKey refuses a key the file may not have, with the nearest one
// it may.
func unknownKey(key toml.Key) error {
	last := key[len(key)-1]
	var known []string
	t := reflect.TypeFor[fileKeys]()
	if len(key) > 2 && key[0] == "group" {
		t = reflect.TypeFor[groupKeys]()
	}
	for f := range t.Fields() {
		known = append(known, f.Tag.Get("toml"))
	}
	msg := fmt.Sprintf("unknown key %s", nodes.Printable(key.String()))
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(last), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Errorf("%s: did you mean %s?", msg, best)
	}
	return fmt.Errorf("%s; the keys are %s", msg, strings.Join(known, ", "))
}

// path is p relative to the project's folder.
func (pf *projectFile) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(pf.Dir, p)
}

// addGroup adds a group, whose name no other group has.
func (pf *projectFile) addGroup(name string, s nodes.Spec, killMode string) error {
	if err := nodes.CheckName(name); err != nil {
		return fmt.Errorf("group name: %w", err)
	}
	for _, g := range pf.Groups {
		if g.Name == name {
			return fmt.Errorf("group %s given twice", name)
		}
	}
	s.Group = name
	pf.Groups = append(pf.Groups, projectGroup{Name: name, Spec: s, KillMode: killMode})
	return nil
}
