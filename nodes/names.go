package nodes

import (
	"fmt"
	"strings"
)

// DefaultRangePrefix is the prefix of the names a count expands to, as in
// celery multi: "3" gives celery1, celery2 and celery3.
const DefaultRangePrefix = "celery"

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

func checkHost(h string) error {
	if h == "." || h == ".." || strings.ContainsAny(h, "/\x00@") {
		return fmt.Errorf("%w: host part %q", ErrBadName, h)
	}
	return nil
}
