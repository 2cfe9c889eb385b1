package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

func init() {
	// Help, the app's and each verb's, fits the width it is printed at:
	// urfave/cli's flag lines run to 180 columns, and its wrap cuts an
	// indented example's indentation.
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		width := helpWidth(w)
		cli.HelpPrinterCustom(w, templ, data, map[string]any{
			"wrap":     func(s string, offset int) string { return wrapHelp(s, offset, width) },
			"flagHelp": func(f cli.Flag) string { return flagHelp(f, width) },
		})
	}
	flags := regexp.MustCompile(`\{\{template "visibleFlagTemplate" \.\}\}`)
	cli.AppHelpTemplate = flags.ReplaceAllString(cli.AppHelpTemplate, flagList)
	cli.CommandHelpTemplate = flags.ReplaceAllString(cli.CommandHelpTemplate, flagList)
}

// flagList lists the flags as flagHelp lays them out.
const flagList = `{{range .VisibleFlags}}{{flagHelp .}}{{end}}`

// helpWidth is the width help is wrapped to: the terminal's, else 80.
func helpWidth(w io.Writer) int {
	if n := termWidth(w); n > 0 && isTerminal(w) {
		return n
	}
	return 80
}

// flagCol is the column a flag's help starts at, when the terminal is
// wide enough for two columns.
const flagCol = 28

// flagHelp is one flag in help, starting on a new line: its names and
// placeholder, then its help wrapped to width, beside the names when
// they leave room, else on the lines under them.
func flagHelp(f cli.Flag, width int) string {
	names, usage, _ := strings.Cut(f.String(), "\t")
	col := flagCol
	if width < 60 {
		col = 7
	}
	pad := strings.Repeat(" ", col)
	first := "\n   " + names
	if n := 3 + utf8.RuneCountInString(names); n+2 <= col {
		first += strings.Repeat(" ", col-n)
	} else {
		first += "\n" + pad
	}
	return first + strings.Join(fill(usage, width-col, width-col), "\n"+pad)
}

// fill breaks s at spaces into lines of at most first characters, then
// rest; a word longer than a line stands alone on its own.
func fill(s string, first, rest int) []string {
	var lines []string
	line, limit := "", first
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > limit {
			lines = append(lines, line)
			line, limit = "", rest
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// wrapHelp is urfave/cli's template function wrap: s's paragraphs
// (runs of lines at the left margin) joined and broken again at spaces
// to fit width when printed offset columns in, every line but the first
// indented by offset; an indented line (an example) keeps its own line
// and indentation.
func wrapHelp(s string, offset, width int) string {
	var paras []string
	for _, line := range strings.Split(s, "\n") {
		n := len(paras)
		if n > 0 && line != "" && line[0] != ' ' && paras[n-1] != "" && paras[n-1][0] != ' ' {
			paras[n-1] += " " + line
			continue
		}
		paras = append(paras, line)
	}
	pad := strings.Repeat(" ", offset)
	for i, line := range paras {
		if line == "" {
			continue
		}
		body := strings.TrimLeft(line, " ")
		lead := line[:len(line)-len(body)]
		room := max(width-offset-len(lead), 20)
		text := lead + strings.Join(fill(body, room, room), "\n"+pad+lead)
		if i > 0 {
			text = pad + text
		}
		paras[i] = text
	}
	return strings.Join(paras, "\n")
}

// versionCommand is multi version, the same as multi --version.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version and the commit multi was built from (as --version)",
		UsageText: "multi version",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Exit(fmt.Sprintf("multi version: %q: version takes no arguments\nusage: multi version", c.Args().First()), exitUsage)
			}
			cli.ShowVersion(c)
			return nil
		},
	}
}
