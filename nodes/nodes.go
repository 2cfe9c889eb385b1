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
	"unicode/utf8"
)

// DefaultRangePrefix is the prefix of the names a count expands to, as in
// celery multi: "3" gives celery1, celery2 and celery3.
const DefaultRangePrefix = "celery"

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
	// SelfLock means the node locks its own pidfile (see [OwnFromEnv])
	// instead of multi's exec step locking it before the exec; start then
	// waits for the node to take the lock.
	SelfLock bool
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
	ErrBadScope      = errors.New("bad node list")
)

// A Spec describes a set of nodes before expansion: the names as the user
// gave them and the templates of their files and command. Its zero value
// for each template field has a documented default.
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
	// Options are options for the command, appended after its arguments:
	// "-c" "10" for a short option, "--loglevel=DEBUG" for a long one. An
	// option with a Scope applies to those nodes only, and replaces, for
	// them, the option of the same name given for every node. Values are
	// expanded per node.
	Options []Option
	// Dir is the working directory of the nodes and the base of relative
	// paths; "" means the current directory.
	Dir string
	// SelfLock sets [Node.SelfLock] on every node.
	SelfLock bool
}

// Nodes expands the spec into nodes, in the order the names were given.
// It touches no file. Options are appended to the command only when there
// is one.
func (s Spec) Nodes() ([]Node, error) {
	ns, _, err := s.nodes()
	return ns, err
}

// given records, per node, whether its pidfile and logfile templates were
// given rather than defaulted.
type given struct{ pidfile, logfile bool }

func (s Spec) nodes() ([]Node, []given, error) {
	names, counted, err := s.names()
	if err != nil {
		return nil, nil, err
	}
	host := Hostname()
	if s.Host != "" {
		if host, err = hostFormat(s.Host); err != nil {
			return nil, nil, err
		}
	}
	prefix, err := hostFormat(s.Prefix)
	if err != nil {
		return nil, nil, err
	}
	base := s.Dir
	if base == "" {
		if base, err = os.Getwd(); err != nil {
			return nil, nil, err
		}
	}
	rundir := s.RunDir
	if rundir == "" {
		rundir = DefaultRunDir()
	}

	out := make([]Node, len(names))
	raw := make([]string, len(names))
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		n := Node{Index: i + 1, Host: host, Dir: s.Dir, SelfLock: s.SelfLock}
		if short, h, ok := strings.Cut(name, "@"); ok {
			// A full name keeps its host and takes no prefix.
			full, err := hostFormat(name)
			if err != nil {
				return nil, nil, err
			}
			short, h, _ = strings.Cut(full, "@")
			n.Name, n.Host, raw[i] = short, h, short
		} else {
			if name, err = hostFormat(name); err != nil {
				return nil, nil, err
			}
			n.Name, raw[i] = name, name
			if !counted {
				n.Name = prefix + name
			}
		}
		if err := CheckName(n.Name); err != nil {
			return nil, nil, err
		}
		if err := checkHost(n.Host); err != nil {
			return nil, nil, err
		}
		if seen[n.Name] {
			return nil, nil, fmt.Errorf("%w: %q", ErrDuplicateName, n.Name)
		}
		seen[n.Name] = true
		out[i] = n
	}

	opts := make([][]Option, len(out))
	pidT := make([]string, len(out))
	logT := make([]string, len(out))
	explicit := make([]given, len(out))
	for i := range out {
		pidT[i], logT[i] = s.PidFile, s.LogFile
		explicit[i] = given{s.PidFile != "", s.LogFile != ""}
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
			return nil, nil, err
		}
		for _, i := range idx {
			switch o.Name {
			case "pidfile":
				pidT[i], explicit[i].pidfile = o.Value, true
			case "logfile":
				logT[i], explicit[i].logfile = o.Value, true
			default:
				return nil, nil, fmt.Errorf("%w: --%s cannot be given per node", ErrBadScope, o.Name)
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
			return nil, nil, err
		}
		for _, i := range idx {
			opts[i] = mergeOption(opts[i], o)
		}
	}

	pidfiles := make(map[string]string, len(out))
	for i := range out {
		n := &out[i]
		if n.PidFile, err = expandPath(pidT[i], *n, base); err != nil {
			return nil, nil, err
		}
		if other, dup := pidfiles[n.PidFile]; dup {
			return nil, nil, fmt.Errorf("%w: nodes %s and %s share the pidfile %s", ErrBadTemplate, other, n.Name, n.PidFile)
		}
		pidfiles[n.PidFile] = n.Name
		if n.LogFile, err = expandPath(logT[i], *n, base); err != nil {
			return nil, nil, err
		}
		for _, a := range s.Command {
			w, err := Expand(a, *n)
			if err != nil {
				return nil, nil, err
			}
			n.Command = append(n.Command, w)
		}
		for _, o := range opts[i] {
			words, err := o.words(*n)
			if err != nil {
				return nil, nil, err
			}
			n.Options = append(n.Options, words...)
		}
		if len(n.Command) > 0 {
			n.Command = append(n.Command, n.Options...)
		}
	}
	return out, explicit, nil
}

// names returns the names as given, or the names a lone count expands to.
func (s Spec) names() (names []string, counted bool, err error) {
	if len(s.Names) == 0 {
		return nil, false, ErrNoNodes
	}
	if len(s.Names) == 1 && isCount(s.Names[0]) {
		n, err := strconv.Atoi(s.Names[0])
		if err != nil || n < 1 || n > MaxNodes {
			return nil, false, fmt.Errorf("%w: count %q must be 1 to %d", ErrBadName, s.Names[0], MaxNodes)
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
			out[i] = prefix + strconv.Itoa(i+1)
		}
		return out, true, nil
	}
	return s.Names, false, nil
}

// resolveScope returns the indexes of the nodes an option's scope names: a
// comma list of 1-based indexes, ranges of them (2-4), short names, names
// as given before any prefix, or full names. Unlike celery, indexes and
// ranges work for named nodes too, and a scope naming no node is an error.
func resolveScope(o Option, ns []Node, raw []string) ([]int, error) {
	var idx []int
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
			case a > len(ns) || b > len(ns):
				return nil, bad("index %s out of range 1-%d", part, len(ns))
			case a > b:
				return nil, bad("range %s runs backwards", part)
			}
			for i := a; i <= b; i++ {
				idx = append(idx, i-1)
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

// MaxNameLen is the longest short name, in bytes: every file multi makes
// from a name must fit in a file name (255 bytes), and the longest is the
// record's temp file, "." NAME ".tmp" and up to 10 digits.
const MaxNameLen = 240

// CheckName reports whether name can be a node's short name: not empty, no
// '/', NUL or '@', not "." or "..", not starting with '-', valid UTF-8
// without control characters (they would reach terminals raw), and at most
// [MaxNameLen] bytes.
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
	case hasControl(name):
		return fmt.Errorf("%w: %q contains a control character or is not UTF-8", ErrBadName, name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %.20q... is %d bytes long; names are at most %d bytes", ErrBadName, name, len(name), MaxNameLen)
	}
	return nil
}

// hasControl reports whether s is not valid UTF-8 or holds a control
// character: C0 (below 0x20), DEL or C1 (0x80-0x9f).
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return true
		}
	}
	return false
}

// expandPath expands a file template for n and makes it absolute against
// base. Whatever the names are, the result stays inside the template's
// folder: a ".." written after the first %-letter, or a letter that makes
// a path element "." or "..", is an error.
func expandPath(tmpl string, n Node, base string) (string, error) {
	if !filepath.IsAbs(tmpl) {
		tmpl = base + string(filepath.Separator) + tmpl
	}
	parts := strings.Split(tmpl, string(filepath.Separator))
	lettered := false
	for i, part := range parts {
		if strings.Contains(part, "%") {
			lettered = true
			p, err := Expand(part, n)
			if err != nil {
				return "", err
			}
			if p == "" || p == "." || p == ".." {
				return "", fmt.Errorf("%w: %q gives %q for node %s", ErrBadTemplate, tmpl, p, n.Name)
			}
			parts[i] = p
		} else if lettered && part == ".." {
			return "", fmt.Errorf("%w: %q has '..' after a %%-letter", ErrBadTemplate, tmpl)
		}
	}
	return filepath.Clean(strings.Join(parts, string(filepath.Separator))), nil
}

// hostFormat expands this machine's host name in a node name, prefix or
// host part, as celery multi does: %h all of it, %n up to the first dot,
// %d after it, %i "0", %I nothing, %% a literal %. The literal "" or ” (as
// celery users write an empty --suffix) means empty.
func hostFormat(s string) (string, error) {
	if s == `""` || s == "''" {
		return "", nil
	}
	if !strings.Contains(s, "%") {
		return s, nil
	}
	h := Hostname()
	short, domain, _ := strings.Cut(h, ".")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("%w: %q ends with a lone %%", ErrBadTemplate, s)
		}
		i++
		switch s[i] {
		case 'h':
			b.WriteString(h)
		case 'n':
			b.WriteString(short)
		case 'd':
			b.WriteString(domain)
		case 'i':
			b.WriteByte('0')
		case 'I':
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("%w: unknown %%%c in %q (names know %%h %%n %%d %%i %%I %%%%)", ErrBadTemplate, s[i], s)
		}
	}
	return b.String(), nil
}

func checkHost(h string) error {
	if h == "." || h == ".." || strings.ContainsAny(h, "/\x00@") || hasControl(h) {
		return fmt.Errorf("%w: host part %q", ErrBadName, h)
	}
	return nil
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
