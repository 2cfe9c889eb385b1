// Package cgroup holds a node's whole process tree in a cgroup v2 folder
// of its own, where this user can make one: one parent per rundir,
// <cgroup2 mount><this process's cgroup>/multi.<id>, and a folder per node
// under it. Identity stays the pidfile's lock holder; the cgroup only
// widens what a stop cleans and what status counts. Where no cgroup can be
// made the containment is [Session], multi's behaviour without cgroups.
//
// Every path is reached by the no-link walk of package safefs, and
// nothing is written outside the folders multi made ([Check]).
package cgroup

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// The containments a node can have.
const (
	// Cgroup: the node's processes are in a cgroup v2 folder of its own.
	Cgroup = "cgroup"
	// Session: the node's process and the members of its session.
	Session = "session"
)

// The kill modes, after systemd's KillMode=.
const (
	// Mixed: the stop signal to the lock holder only, SIGKILL to whatever
	// is left in the node's cgroup after the timeout (the default).
	Mixed = "mixed"
	// ControlGroup: the stop signal to every process of the cgroup, then
	// SIGKILL to whatever is left after the timeout.
	ControlGroup = "control-group"
	// Process: the lock holder only; its children are left alone.
	Process = "process"
)

// CheckKillMode returns an error unless m is a node's kill mode: "" (for
// Mixed), Mixed, ControlGroup or Process.
func CheckKillMode(m string) error {
	switch m {
	case "", Mixed, ControlGroup, Process:
		return nil
	}
	return fmt.Errorf("bad kill mode %q: want mixed, control-group or process", m)
}

// Environment variables that choose the containment: EnvContainment is
// auto (the default), cgroup or session; EnvRoot names the cgroup2 mount
// to use instead of the one /proc/self/mountinfo lists.
const (
	EnvContainment = "MULTI_CONTAINMENT"
	EnvRoot        = "MULTI_CGROUP_ROOT"
)

// ErrNotMine: a recorded cgroup path that is not one multi made for this
// rundir and node; nothing is written there.
var ErrNotMine = errors.New("not a cgroup multi made for this node")

// A Containment is what this process can give the nodes of one rundir.
type Containment struct {
	// Mode is Cgroup or Session.
	Mode string
	// Parent is the rundir's cgroup folder (Cgroup only).
	Parent string
	// Why says why Mode is what it is: for Session, why not Cgroup.
	Why string
}

// NodePath is where node name's cgroup is under c ("" under Session).
func (c Containment) NodePath(name string) string {
	if c.Mode != Cgroup {
		return ""
	}
	return filepath.Join(c.Parent, name)
}

// ParentName is the name of the rundir's folder: multi. and a hash of the
// rundir's absolute path, so that two rundirs never share one.
func ParentName(rundir string) string {
	abs, err := filepath.Abs(rundir)
	if err != nil {
		abs = rundir
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return "multi." + hex.EncodeToString(sum[:8])
}

// ErrSpared: a node's cgroup folder is not removed because this process
// (or an ancestor of it) runs in it: a verb run from inside a node.
var ErrSpared = errors.New("this multi runs in it")

// Check returns an error wrapping [ErrNotMine] unless path, read from a
// node's record, is a folder multi makes for node name of rundir: an
// absolute clean path ending in multi.<id of rundir>/name. Nothing is read
// or written in a cgroup before it passes.
func Check(path, rundir, name string) error {
	clean := filepath.Clean(path)
	if !filepath.IsAbs(path) || clean != path || strings.Contains(name, "/") || name == "" ||
		filepath.Base(clean) != name || filepath.Base(filepath.Dir(clean)) != ParentName(rundir) {
		return fmt.Errorf("cgroup %s: %w %s", path, ErrNotMine, name)
	}
	return nil
}

// A Setting is one cgroup v2 limit of a node: the value written into the
// file of its cgroup folder that its controller adds (memory.max), before
// the node's process joins it.
type Setting struct {
	// Controller is the controller whose file it is: memory, cpu, pids.
	Controller string
	// File and Value: what is written where, in the node's folder.
	File, Value string
	// Flag names the limit in errors: --memory-max.
	Flag string
}

// Available returns nil when controller can limit the nodes under c: its
// mode is Cgroup, and the rundir's folder lists the controller in its
// cgroup.controllers (multi then enables it for the nodes' folders).
// Otherwise it says why not, naming the folder and what it lists.
func (c Containment) Available(controller string) error {
	if c.Mode != Cgroup {
		return fmt.Errorf("controller %s not available: nodes here have no cgroup of their own, their containment is their session (%s)", controller, c.Why)
	}
	return available(c.Parent, controller)
}
