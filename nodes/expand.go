package nodes

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

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
