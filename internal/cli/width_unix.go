//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// termWidth is the number of columns of the terminal w is, or 0.
func termWidth(w io.Writer) int { return int(winsize(w).Col) }

// termRows is the number of rows of the terminal w is, or 0.
func termRows(w io.Writer) int { return int(winsize(w).Row) }

// winsize is the size of the terminal w is; zero when w is none.
func winsize(w io.Writer) unix.Winsize {
	f, ok := w.(*os.File)
	if !ok {
		return unix.Winsize{}
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return unix.Winsize{}
	}
	return *ws
}
