package nodes

import (
	"errors"
	"strconv"
	"strings"
)

// Words splits s into words as a POSIX shell does, quotes and
// backslashes included, expanding nothing: Words(Quote(argv)) is argv.
func Words(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // a word is under way (it may be empty: '')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
			continue
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New(`a \ at the end`)
			}
			i++
			w.WriteByte(s[i])
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("an unclosed '")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += 1 + end
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
					j++
				}
				w.WriteByte(s[j])
			}
			if j == len(s) {
				return nil, errors.New(`an unclosed "`)
			}
			i = j
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := i + 2
			for ; j < len(s) && s[j] != '\''; j++ {
				if s[j] != '\\' || j+1 == len(s) {
					w.WriteByte(s[j])
					continue
				}
				j++
				switch s[j] {
				case 'x':
					if j+2 >= len(s) {
						return nil, errors.New(`a short \x in $'...'`)
					}
					b, err := strconv.ParseUint(s[j+1:j+3], 16, 8)
					if err != nil {
						return nil, errors.New(`a bad \x in $'...'`)
					}
					w.WriteByte(byte(b))
					j += 2
				default:
					w.WriteByte(s[j])
				}
			}
			if j == len(s) {
				return nil, errors.New("an unclosed $'")
			}
			i = j
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}
