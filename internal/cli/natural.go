package cli

import (
	"slices"
	"strings"

	"github.com/multi-launcher/multi/multi"
)

// sortNatural puts sts in the natural order of the nodes' names: by
// name, numbers by value (web2 before web10), as a person lists them.
func sortNatural(sts []multi.Status) {
	slices.SortStableFunc(sts, func(a, b multi.Status) int { return naturalCompare(a.Node.Name, b.Node.Name) })
}

// naturalCompare compares a and b piece by piece, a run of digits by its
// value and any other byte as itself; names equal so (w01, w1) compare as
// strings.
func naturalCompare(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		dx, dy := digits(x), digits(y)
		if dx > 0 && dy > 0 {
			nx, ny := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
			if len(nx) != len(ny) {
				return len(nx) - len(ny)
			}
			if c := strings.Compare(nx, ny); c != 0 {
				return c
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if x[0] != y[0] {
			return int(x[0]) - int(y[0])
		}
		x, y = x[1:], y[1:]
	}
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	return strings.Compare(a, b)
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
