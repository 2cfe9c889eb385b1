package cli

import (
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// manPage is the manual page (roff, man macros) of app: NAME, SYNOPSIS
// (every verb's usage line), DESCRIPTION, the global OPTIONS, COMMANDS
// (each with its usage and flags), then manSections. It is written here,
// not by urfave/cli's generator, which links a Markdown renderer into
// every build (multi is built without it: -tags urfave_cli_no_docs).
func manPage(app *cli.App) string {
	var b strings.Builder
	b.WriteString(".TH MULTI 1\n.SH NAME\n" + roffText(app.Name+" - "+app.Usage) + "\n")
	b.WriteString(".SH SYNOPSIS\n.EX\n")
	for _, cmd := range app.VisibleCommands() {
		if cmd.Name == "help" {
			continue // its line is below
		}
		line := cmd.UsageText
		if line == "" {
			line = "multi " + cmd.Name
		}
		b.WriteString(roffText(line) + "\n")
	}
	b.WriteString(roffText("multi help [COMMAND]\nmulti --help\nmulti --version") + "\n.EE\n")
	b.WriteString(".SH DESCRIPTION\n")
	for i, para := range strings.Split(app.Description, "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roffText(para) + "\n")
	}
	b.WriteString(".PP\nUsage:\n.EX\n" + roffText(app.UsageText) + "\n.EE\n")
	b.WriteString(".SH OPTIONS\n")
	manFlags(&b, app.VisibleFlags())
	b.WriteString(".SH COMMANDS\n")
	for _, cmd := range app.VisibleCommands() {
		b.WriteString(".SS " + roffText(strings.Join(cmd.Names(), ", ")) + "\n")
		b.WriteString(roffText(cmd.Usage) + "\n")
		if u := strings.Trim(cmd.UsageText, "\n"); u != "" {
			b.WriteString(".PP\n.EX\n" + roffText(u) + "\n.EE\n")
		}
		manFlags(&b, cmd.VisibleFlags())
	}
	b.WriteString(manSections)
	return b.String()
}

// manFlags writes each flag as a tagged paragraph: its names and value
// placeholder, then its help and default, sorted by name as help lists
// them.
func manFlags(b *strings.Builder, flags []cli.Flag) {
	type item struct{ tag, text string }
	var items []item
	for _, f := range flags {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		var names []string
		for _, n := range f.Names() {
			if n = strings.TrimSpace(n); len(n) > 1 {
				names = append(names, `\fB\-\-`+roffText(n)+`\fR`)
			} else {
				names = append(names, `\fB\-`+roffText(n)+`\fR`)
			}
		}
		placeholder, usage := unquoteUsage(df.GetUsage())
		tag := strings.Join(names, ", ")
		if df.TakesValue() {
			if placeholder == "" {
				placeholder = "VALUE"
			}
			tag += `=\fI` + roffText(placeholder) + `\fR`
			def := df.GetDefaultText()
			if def == "" {
				def = df.GetValue()
			}
			if def != "" {
				usage += " (default: " + def + ")"
			}
		}
		items = append(items, item{tag, roffText(usage)})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].tag < items[j].tag })
	for _, it := range items {
		b.WriteString(".TP\n" + it.tag + "\n" + it.text + "\n")
	}
}

// roffText is s as roff text: a backslash and a minus escaped, and a
// line that would begin with a control character (. or ') begun with
// the zero-width \&, so that no text is read as a request.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// unquoteUsage is a flag's help with its placeholder, the first word in
// backquotes, unquoted, and that word (as urfave/cli's help reads it).
func unquoteUsage(usage string) (placeholder, text string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}
