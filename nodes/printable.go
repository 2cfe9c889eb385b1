package nodes

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unsafeRune reports whether r must never reach a terminal raw: a C0 or
// C1 control, DEL, a format character (Unicode category Cf: the bidi
// overrides and isolates such as U+202E, zero-width characters) or a
// line or paragraph separator. Each can make a line read otherwise than
// it is (text reversed, hidden, a line forged) or drive the terminal.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) ||
		unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// Printable returns s with each control or format character, and each
// byte of invalid UTF-8, written as a Go escape (\x1b, \u202e).
func Printable(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
