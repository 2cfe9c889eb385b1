// Package nodes names the nodes that multi runs and owns the files that
// describe them: the %-templates that name each node's pidfile, logfile and
// command, the pidfile itself with its lock, and the node records that let
// later commands find a node again.
//
// # Names
//
// A node has a short name ("w1"), a host part (this machine's host name by
// default) and a 1-based index in the order the user gave. Its full name is
// short@host, as in celery multi. A count such as "3" stands for the names
// celery1, celery2 and celery3.
//
// # Pidfiles
//
// A node's pidfile holds its pid on the first line and is locked, with a
// POSIX record lock over the whole file, by the node's own process for the
// whole of its life. The kernel drops that lock when the process dies, so a
// pidfile that nobody has locked is stale, whatever pid it names. [Inspect]
// asks the kernel who holds the lock; [Acquire] takes it.
package nodes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultRangePrefix is the prefix of the names a count expands to, as in
// celery multi: "3" gives celery1, celery2 and celery3.
const DefaultRangePrefix = "celery"

// A Node is one named instance of the command, with its files resolved.
type Node struct {
	// Name is the short name, unique within a set: "w1".
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
	// Command is the node's argv, expanded. It may be empty for verbs that
	// do not start anything.
	Command []string
	// Dir is the node's working directory; "" means the caller's.
	Dir string
}

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
)

// A Spec describes a set of nodes before expansion: the names as the user
// gave them and the templates of their files and command. Its zero value
// for each template field has a documented default.
type Spec struct {
	// Names are the node names as given, or a single count ("3").
	Names []string
	// Host is the default host part of full names; "" means this machine's
	// host name.
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
	// Command is the command template; each argument is expanded on its
	// own, so spaces and quotes inside an argument survive.
	Command []string
	// Dir is the working directory of the nodes and the base of relative
	// paths; "" means the current directory.
	Dir string
}

// Nodes expands the spec into nodes, in the order the names were given.
// It touches no file.
func (s Spec) Nodes() ([]Node, error) {
	names, err := s.names()
	if err != nil {
		return nil, err
	}
	host := s.Host
	if host == "" {
		host = Hostname()
	}
	base := s.Dir
	if base == "" {
		if base, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	rundir := s.RunDir
	if rundir == "" {
		rundir = DefaultRunDir()
	}
	pidT, logT := s.PidFile, s.LogFile
	if pidT == "" {
		pidT = filepath.Join(escapePercent(rundir), "%n.pid")
	}
	if logT == "" {
		logT = filepath.Join(escapePercent(rundir), "%n.log")
	}

	out := make([]Node, 0, len(names))
	seen := make(map[string]bool, len(names))
	pidfiles := make(map[string]string, len(names))
	for i, raw := range names {
		n := Node{Index: i + 1, Host: host, Dir: s.Dir}
		n.Name, n.Host = raw, host
		if short, h, ok := strings.Cut(raw, "@"); ok {
			n.Name, n.Host = short, h
		}
		if err := CheckName(n.Name); err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateName, n.Name)
		}
		seen[n.Name] = true
		if n.PidFile, err = expandPath(pidT, n, base); err != nil {
			return nil, err
		}
		if other, dup := pidfiles[n.PidFile]; dup {
			return nil, fmt.Errorf("%w: nodes %s and %s share the pidfile %s", ErrBadTemplate, other, n.Name, n.PidFile)
		}
		pidfiles[n.PidFile] = n.Name
		if n.LogFile, err = expandPath(logT, n, base); err != nil {
			return nil, err
		}
		if len(s.Command) > 0 {
			n.Command = make([]string, len(s.Command))
			for j, a := range s.Command {
				if n.Command[j], err = Expand(a, n); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// names returns the names as given, or the names a lone count expands to.
func (s Spec) names() ([]string, error) {
	if len(s.Names) == 0 {
		return nil, ErrNoNodes
	}
	if len(s.Names) == 1 && isCount(s.Names[0]) {
		n, err := strconv.Atoi(s.Names[0])
		if err != nil || n < 1 || n > MaxNodes {
			return nil, fmt.Errorf("%w: count %q must be 1 to %d", ErrBadName, s.Names[0], MaxNodes)
		}
		prefix := s.RangePrefix
		if prefix == "" {
			prefix = DefaultRangePrefix
		}
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + strconv.Itoa(i+1)
		}
		return out, nil
	}
	return s.Names, nil
}

// MaxNodes bounds a count, so that a typo cannot fork a million processes.
const MaxNodes = 100000

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// CheckName reports whether name can be a node's short name: not empty, no
// '/', NUL or '@', not "." or "..", and not starting with '-'.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrBadName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case strings.ContainsAny(name, "/\x00@"):
		return fmt.Errorf("%w: %q contains '/', '@' or NUL", ErrBadName, name)
	case name[0] == '-':
		return fmt.Errorf("%w: %q starts with '-'", ErrBadName, name)
	}
	return nil
}

// expandPath expands a file template for n and makes it absolute against base.
func expandPath(tmpl string, n Node, base string) (string, error) {
	p, err := Expand(tmpl, n)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// Expand replaces the %-letters in tmpl with the node's values:
//
//	%n, %N  short name              w1
//	%h, %p  full name               w1@host
//	%d      host part               host
//	%i      1-based index           1
//	%I      empty (celery's index of the main process; keeps %n%I.log working)
//	%%      a literal %
//
// Replacement text is not expanded again. Any other letter, or a lone % at
// the end, is an error naming the template.
func Expand(tmpl string, n Node) (string, error) {
	if !strings.Contains(tmpl, "%") {
		return tmpl, nil
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(tmpl) {
			return "", fmt.Errorf("%w: %q ends with a lone %%", ErrBadTemplate, tmpl)
		}
		i++
		switch tmpl[i] {
		case 'n', 'N':
			b.WriteString(n.Name)
		case 'h', 'p':
			b.WriteString(n.FullName())
		case 'd':
			b.WriteString(n.Host)
		case 'i':
			b.WriteString(strconv.Itoa(n.Index))
		case 'I':
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("%w: unknown %%%c in %q (write %%%% for a literal %%)", ErrBadTemplate, tmpl[i], tmpl)
		}
	}
	return b.String(), nil
}

func escapePercent(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// Hostname returns this machine's host name, or "localhost" when it has none.
func Hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// DefaultRunDir returns the folder multi uses when no --rundir is given:
// $MULTI_RUNDIR when set, else /run/multi for root, $XDG_RUNTIME_DIR/multi
// when that is set, else $TMPDIR/multi-UID.
func DefaultRunDir() string {
	if d := os.Getenv("MULTI_RUNDIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
	}
	if os.Geteuid() == 0 {
		return "/run/multi"
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "multi")
	}
	return filepath.Join(os.TempDir(), "multi-"+strconv.Itoa(os.Geteuid()))
}
