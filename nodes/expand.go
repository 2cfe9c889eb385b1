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
	return expand(s, Node{Name: short, Host: domain}, h)
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
	return expand(tmpl, n, "")
}

// expand is the one %-template reader behind both layers of templates.
// With host "" it is the node layer (files, command, options; Expand),
// with the letters Expand documents. Otherwise it is the host layer
// (names, prefixes, host parts; hostFormat): n is this machine as a node
// of index 0, its host name split at the first dot, and host, the whole
// name, is what %h gives; %N and %p are unknown there.
func expand(tmpl string, n Node, host string) (string, error) {
	nodeLayer := host == ""
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' {
			b.WriteByte(tmpl[i])
			continue
		}
		if i+1 == len(tmpl) {
			return "", fmt.Errorf("%w: %q ends with a lone %%", ErrBadTemplate, tmpl)
		}
		i++
		switch c := tmpl[i]; {
		case c == 'n' || nodeLayer && c == 'N':
			b.WriteString(n.Name)
		case c == 'h' && !nodeLayer:
			b.WriteString(host)
		case c == 'h' || nodeLayer && c == 'p':
			b.WriteString(n.FullName())
		case c == 'd':
			b.WriteString(n.Host)
		case c == 'i':
			b.WriteString(strconv.Itoa(n.Index))
		case c == 'I':
		case c == '%':
			b.WriteByte('%')
		case nodeLayer:
			return "", fmt.Errorf("%w: unknown %%%c in %q (write %%%% for a literal %%)", ErrBadTemplate, c, tmpl)
		default:
			return "", fmt.Errorf("%w: unknown %%%c in %q (names know %%h %%n %%d %%i %%I %%%%)", ErrBadTemplate, c, tmpl)
		}
	}
	return b.String(), nil
}

func escapePercent(s string) string { return strings.ReplaceAll(s, "%", "%%") }
