// Package nodes turns what the user gives multi (names, templates of
// files and command, options) into nodes, touching no file or process: a
// [Spec] holds it as given; [Spec.Nodes] expands it into nodes:
//
//	ns, err := nodes.Spec{
//		Names:   []string{"3"},
//		Host:    "example.com",
//		RunDir:  "/run/app",
//		Command: []string{"app", "--port=80%i", "--name=%h"},
//		Options: []nodes.Option{{Name: "-c", Value: "4", HasValue: true, Scope: "2-3"}},
//	}.Nodes()
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	for _, n := range ns {
//		fmt.Println(n.FullName(), n.PidFile, nodes.Quote(n.Command))
//	}
//	// celery1@example.com /run/app/celery1.pid app --port=801 --name=celery1@example.com
//	// celery2@example.com /run/app/celery2.pid app --port=802 --name=celery2@example.com -c 4
//	// celery3@example.com /run/app/celery3.pid app --port=803 --name=celery3@example.com -c 4
//
// [Join] joins Specs for nodes with different commands. Package multi
// starts and stops the nodes; package nodes/pidfile owns their pidfiles.
package nodes

import (
	"errors"
)

// A Node is one named instance of the command, with its files resolved.
// In JSON its fields have the snake_case names of README's schema.
type Node struct {
	// Name is the short name, unique within a set: "w1" (with any prefix).
	Name string `json:"name"`
	// Host is the host part of the full name.
	Host string `json:"host"`
	// Index is the 1-based position of the node in the set.
	Index int `json:"index"`

	// PidFile is the absolute path of the node's pidfile.
	PidFile string `json:"pidfile"`
	// LogFile is the absolute path its stdout and stderr are appended to.
	LogFile string `json:"logfile"`
	// Command is the node's argv, expanded: the command given, then the
	// options for it (celery's global options, -A and the like, right
	// after the word celery). It may be empty for verbs that start
	// nothing.
	Command []string `json:"command,omitempty"`
	// Options are the words of Command that came from options given to
	// multi (celery's worker options), so that a restart can replace them.
	Options []string `json:"options,omitempty"`
	// Dir is the node's working directory; "" means the caller's.
	Dir string `json:"dir,omitempty"`
	// Env holds KEY=VALUE entries added to the node's environment, and
	// recorded: a restart passes them again, over its caller's environment.
	Env []string `json:"env,omitempty"`
	// SelfLock: the node locks its own pidfile (pidfile.OwnFromEnv), not
	// multi before the exec; start waits for it to take the lock.
	SelfLock bool `json:"self_lock,omitempty"`
	// Ready is the node's readiness check, expanded ([ParseReady] says
	// its kinds); the zero ReadyCheck for none. Start waits until it passes; it is
	// recorded, so that restart and status use it again.
	Ready ReadyCheck `json:"ready,omitzero"`
	// Cgroup is the path of the node's cgroup v2 folder, which holds its
	// whole process tree; "" where its containment is its session.
	Cgroup string `json:"cgroup,omitempty"`
	// KillMode is how a stop treats the node's tree, as systemd's
	// KillMode=: mixed, control-group or process; "" is mixed.
	KillMode string `json:"kill_mode,omitempty"`
	// Group is the project file's group the node belongs to ("" for a
	// node started from the command line): what a scale counts.
	Group string `json:"group,omitempty"`
	// After are the nodes it needs: it starts only once they have reached
	// their condition, and stops before them. Recorded, so that every
	// later start and stop honours them.
	After []Need `json:"after,omitempty"`
	// EnvFiles are files of KEY=VALUE lines (systemd's EnvironmentFile=
	// syntax, see [ReadEnvFile]) read at every start, after Env; only
	// their paths are recorded, never what they hold.
	EnvFiles []string `json:"env_files,omitempty"`
	// Limits are what its process may not pass (rlimits, cgroup v2
	// limits), set at every start; recorded, so that restart sets them
	// again.
	Limits Limits `json:"limits,omitzero"`
	// Recorded is the process the node's record named when the node was
	// resolved from it (as multi's command line does; zero from
	// Spec.Nodes): multi checks its pidfile's holder against it.
	Recorded Started `json:"-"`
}

// Started names one process for good: its pid, its start time in clock
// ticks since boot, and the inode of a pidfd of it where the kernel has
// pidfs (Linux 6.9+). A node's record names the one that runs it.
type Started struct {
	PID        int
	StartTicks uint64
	PidfdIno   uint64 // 0 where pidfds have no inode of their own
}

// EnvNode holds, in the environment of every node multi starts, the
// node's full name (pidfile.EnvPidfile holds its pidfile).
const EnvNode = "MULTI_NODE"

// FullName returns the node's full name, short@host.
func (n Node) FullName() string { return n.Name + "@" + n.Host }

// String returns the short name.
func (n Node) String() string { return n.Name }

// Errors returned by [Spec.Nodes] and [Expand]. Each is wrapped in an error
// that names the offending token; test with [errors.Is].
var (
	ErrNoNodes       = errors.New("no nodes given")
	ErrBadName       = errors.New("bad node name")
	ErrDuplicateName = errors.New("duplicate node name")
	ErrBadTemplate   = errors.New("bad template")
	ErrBadScope      = errors.New("bad node list")
)

// ErrRecordTooLarge is wrapped by the error of a node whose record would be
// over 1 MiB (its command, options and environment): multi does nothing.
var ErrRecordTooLarge = errors.New("record too large")
