package nodes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultRangePrefix begins the names a count gives: "3" is celery1-3.
const DefaultRangePrefix = "celery"

// maxNodes bounds a count, so that a typo cannot fork a million processes.
const maxNodes = 100000

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

// MaxNameLen is the longest short name, in bytes.
const MaxNameLen = 240

// CheckName reports whether name can be a node's short name: not empty,
// no '/', NUL or '@', not "." or "..", no leading '-', valid UTF-8 with no
// control or format character, and at most [MaxNameLen] bytes.
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
		return fmt.Errorf("%w: %q contains a control character or a format character (a bidi override such as U+202E), or is not UTF-8", ErrBadName, name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %.20q... is %d bytes long; names are at most %d bytes", ErrBadName, name, len(name), MaxNameLen)
	}
	return nil
}

// hasControl reports whether s is not valid UTF-8 or holds a rune that
// [unsafeRune] refuses: C0, DEL, C1, a format character (Cf, such as
// the bidi override U+202E) or a line or paragraph separator.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

func checkHost(h string) error {
	if h == "." || h == ".." || strings.ContainsAny(h, "/\x00@") || hasControl(h) {
		return fmt.Errorf("%w: host part %q", ErrBadName, h)
	}
	return nil
}
