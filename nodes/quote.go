package nodes

import "strings"

// Quote formats argv as one POSIX shell command line that runs the same
// argv when pasted: words of plain characters stay as they are, any other
// word is single-quoted, with each ' written as '\”.
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
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
