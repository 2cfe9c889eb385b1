package cli

// The table's columns: two spaces between them; the file columns and
// the node's name shrink to fit, never below these widths.
const (
	gap     = 2
	minFile = 12
	minName = 8
	minCell = 5 // elide's least
)

// shrink narrows the table's columns (NODE, STATE, PID, UPTIME, PIDFILE,
// LOGFILE) until they fit width: the wider file column first, down to
// minFile each; then the node names, which lose their middle to an
// ellipsis, down to minName; then the files again, and the names, down
// to minCell. A table that does not fit even then stays as wide.
func shrink(widths []int, width int) {
	over := func() bool { return sum(widths)+gap*(len(widths)-1) > width }
	files := func(least int) {
		for over() {
			i := 4
			if widths[5] > widths[4] {
				i = 5
			}
			if widths[i] <= least {
				return
			}
			widths[i]--
		}
	}
	names := func(least int) {
		for over() && widths[0] > least {
			widths[0]--
		}
	}
	files(minFile)
	names(minName)
	files(minCell)
	names(minCell)
}
