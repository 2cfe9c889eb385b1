// Package nodes owns what multi knows about a node before and after it
// runs, without starting or signalling anything (package multi does
// that). A [Spec] holds the names and templates as given; [Spec.Nodes]
// expands it into nodes with their files and command, touching no file:
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
// [Join] joins Specs, for nodes with different commands. Package multi
// starts and stops the nodes.
//
// The package holds:
//
//   - the [Node] itself and the errors about names and templates (node.go);
//   - names: short names, counts, host parts and their checks (names.go);
//   - templates: the %-letters of names and of each node's pidfile, logfile
//     and command, one expander for both (expand.go);
//   - the spec: the names and templates as given, expanded into nodes with
//     their per-node options and files (spec.go, option.go), and this
//     machine's defaults (machine.go);
//   - node records, which let later commands find a node again without its
//     names (record.go; the rundir's lock file and leftover temp files,
//     rundir.go), and shell quoting of a node's command (quote.go);
//   - the folder errors of records, pidfiles and logfiles (files.go);
//   - the /proc reader: a process's state, start time and session
//     (proc*.go).
//
// A node's pidfile and its lock belong to package nodes/pidfile, and the
// walk that reaches every file without following a planted link to
// package internal/safefs; package nodes uses both.
//
// # Names
//
// A node has a short name ("w1"), a host part (this machine's host name by
// default) and a 1-based index in the order the user gave. Its full name is
// short@host, as in celery multi. A count such as "3" stands for the names
// celery1, celery2 and celery3.
//
// # Folders and links
//
// Every folder of a record, pidfile or logfile is reached one element at
// a time from "/", never following a symbolic link that someone other
// than root or this user could have planted or swapped (an
// [UnsafeLinkError]; a link of root's or this user's, in a folder only
// they can write to, such as /var/run -> /run, is followed). The folder
// reached must be one that only root or this user can write to, else it
// is refused with an [UnsafeFolderError] unless it was accepted
// ([AcceptShared]). A file in it is opened without following a link,
// never waiting on a FIFO, and only as a regular file of root or this
// user with one name.
//
// # Pidfiles
//
// A node's pidfile holds its pid on the first line and is locked, with a
// POSIX record lock over the whole file, by the node's own process for the
// whole of its life. The kernel drops that lock when the process dies, so a
// pidfile that nobody has locked is stale, whatever pid it names.
// pidfile.Inspect asks the kernel who holds the lock; pidfile.Acquire
// takes it.
package nodes

import (
	"errors"
	"fmt"
)

// A Node is one named instance of the command, with its files resolved.
type Node struct {
	// Name is the short name, unique within a set: "w1" (with any prefix).
	Name string
	// Host is the host part of the full name.
	Host string
	// Index is the 1-based position of the node in the set.
	Index int

	// PidFile is the absolute path of the node's pidfile.
	PidFile string
	// LogFile is the absolute path the node's stdout and stderr are
	// appended to.
	LogFile string
	// Command is the node's argv, expanded: the command given, then the
	// options for it. It may be empty for verbs that start nothing.
	Command []string
	// Options is the tail of Command that came from options given to multi
	// (celery's worker options), so that a restart can replace them.
	Options []string
	// Dir is the node's working directory; "" means the caller's.
	Dir string
	// Env holds KEY=VALUE entries added to the node's environment, over
	// the environment it is started with; they are recorded, so that a
	// restart passes them again. The rest of the starter's environment is
	// not recorded: a restarted node gets the restarting caller's.
	Env []string
	// SelfLock means the node locks its own pidfile (see pidfile.OwnFromEnv)
	// instead of multi's exec step locking it before the exec; start then
	// waits for the node to take the lock.
	SelfLock bool
	// Ready is the node's readiness check, expanded ([ParseReady] says
	// its kinds); the zero ReadyCheck for none. Start waits until it passes; it is
	// recorded, so that restart and status use it again.
	Ready ReadyCheck
	// Cgroup is the path of the node's cgroup v2 folder, which holds its
	// whole process tree; "" where its containment is its session.
	Cgroup string
	// KillMode is how a stop treats the node's tree (internal/cgroup's
	// mixed, control-group or process); "" is mixed.
	KillMode string

	// recorded is the process the node's record named when Spec.Resolve
	// read it, if the node's pidfile is the record's (see Recorded).
	recorded Started
}

// Recorded returns the process n's record named when [Spec.Resolve] read
// the record for n, and zero for a node not resolved from a record, a
// record without a process, or a node given another pidfile than its
// record's. It is what the record said then: a caller that finds the
// pidfile held by another process reads the record again
// ([ReadRecordStarted]) before it calls the holder a stranger.
func (n Node) Recorded() Started { return n.recorded }

// CheckKillMode returns an error unless m is a [Node.KillMode]: "" or
// "mixed", "control-group" or "process", as systemd's KillMode=.
func CheckKillMode(m string) error {
	switch m {
	case "", "mixed", "control-group", "process":
		return nil
	}
	return fmt.Errorf("bad kill mode %q: want mixed, control-group or process", m)
}

// EnvNode is the environment variable that holds, for every node multi
// starts, the node's full name, short@host (pidfile.EnvPidfile holds its
// pidfile).
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
