package nodes

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// ErrBadNeed is the error of an after edge that cannot be parsed.
var ErrBadNeed = errors.New("bad after")

// A Condition is what a needed node must have reached before the nodes
// after it start.
type Condition string

// The conditions of an after edge.
const (
	// AfterStarted: it runs, holding its pidfile's lock.
	AfterStarted Condition = "started"
	// AfterReady: it runs and passed its readiness check (started, for a
	// node without one).
	AfterReady Condition = "ready"
	// AfterDone: it ran to its end and exited 0 (a one-shot, such as a
	// migration).
	AfterDone Condition = "done"
)

// A Need is one edge of [Node.After]: the nodes named Name (a node, or a
// project group's nodes) must reach Cond before this node starts, and it
// stops before they do. One edge means both order and require: a needed
// node that failed fails the nodes after it.
type Need struct {
	Name string    `json:"name"`
	Cond Condition `json:"cond"`
}

// String is the edge as ParseNeed reads it: "db:ready".
func (n Need) String() string { return n.Name + ":" + string(n.Cond) }

// ParseNeed parses "NAME" (condition started) or "NAME:CONDITION", the
// condition one of started, ready, done.
func ParseNeed(s string) (Need, error) {
	name, cond, ok := strings.Cut(s, ":")
	n := Need{Name: name, Cond: AfterStarted}
	if ok {
		n.Cond = Condition(cond)
	}
	switch n.Cond {
	case AfterStarted, AfterReady, AfterDone:
	default:
		return Need{}, fmt.Errorf("%w %q: the condition is started, ready or done, not %q", ErrBadNeed, s, cond)
	}
	if err := CheckName(name); err != nil {
		return Need{}, fmt.Errorf("%w %q: %w", ErrBadNeed, s, err)
	}
	return n, nil
}

// ReadEnvFile reads KEY=VALUE entries in systemd's EnvironmentFile=
// syntax: blank lines and lines starting with # or ; are skipped, an
// "export " before the key is allowed, a value may be in single quotes
// (taken as is) or double quotes (\\, \", \$ and \n unescaped), a line
// ending in a backslash continues on the next. name is the file's name,
// for errors; at most 1 MiB is read.
func ReadEnvFile(r io.Reader, name string) ([]string, error) {
	const max = 1 << 20
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("env file %s: %w", name, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("env file %s: larger than 1 MiB", name)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, max+1)
	lineNo, pending, first := 0, "", 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if pending == "" {
			first = lineNo
			line = strings.TrimLeftFunc(line, unicode.IsSpace)
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		if strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			pending += strings.TrimSuffix(line, `\`)
			continue
		}
		line, pending = pending+line, ""
		kv, err := envLine(line)
		if err != nil {
			return nil, fmt.Errorf("env file %s, line %d: %w", name, first, err)
		}
		out = append(out, kv)
	}
	if pending != "" {
		kv, err := envLine(pending)
		if err != nil {
			return nil, fmt.Errorf("env file %s, line %d: %w", name, first, err)
		}
		out = append(out, kv)
	}
	return out, sc.Err()
}

// envLine is one logical line of an env file as KEY=VALUE.
func envLine(line string) (string, error) {
	line = strings.TrimPrefix(line, "export ")
	key, val, ok := strings.Cut(line, "=")
	key = strings.TrimSpace(key)
	if !ok || !validEnvKey(key) {
		return "", fmt.Errorf("want KEY=VALUE, not %q", Printable(line))
	}
	val = strings.TrimSpace(val)
	if strings.ContainsRune(val, 0) {
		return "", fmt.Errorf("%s: a NUL in its value", key)
	}
	switch {
	case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
		val = val[1 : len(val)-1]
	case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
		var b strings.Builder
		in := val[1 : len(val)-1]
		for i := 0; i < len(in); i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					b.WriteByte('\n')
				case '\\', '"', '$', '`':
					b.WriteByte(in[i])
				default:
					b.WriteByte('\\')
					b.WriteByte(in[i])
				}
				continue
			}
			b.WriteByte(in[i])
		}
		val = b.String()
	}
	return key + "=" + val, nil
}

// validEnvKey: letters, digits and underscores, not starting with a digit.
func validEnvKey(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for _, r := range k {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
