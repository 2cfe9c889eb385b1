//go:build !unix

package cli

import "io"

// termWidth is 0, unknown: the table then keeps to 80 columns.
func termWidth(io.Writer) int { return 0 }

// termRows is 0, unknown.
func termRows(io.Writer) int { return 0 }
