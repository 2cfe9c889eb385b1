package nodes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Quote formats argv as one POSIX shell command line that runs the same
// argv when pasted; a word with a control character is written $'...'.
func Quote(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
			b.WriteString(w)
			continue
		}
		if hasControl(strings.NewReplacer("\t", "", "\n", "").Replace(w)) {
			dollarQuote(&b, w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// dollarQuote writes w as $'...': every byte of an unsafe rune or of
// invalid UTF-8 as \xHH, backslash and ' escaped, the rest as it is.
func dollarQuote(b *strings.Builder, w string) {
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRuneInString(w[i:])
		switch {
		case (r == utf8.RuneError && n <= 1) || (unsafeRune(r) && r != '\t' && r != '\n'):
			for _, c := range []byte(w[i : i+n]) {
				fmt.Fprintf(b, `\x%02x`, c)
			}
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteString(w[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
}
