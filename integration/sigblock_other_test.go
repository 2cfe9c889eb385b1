//go:build unix && !linux

package integration

import (
	"fmt"
	"os"
)

// sigBlock needs a thread's signal mask (Linux): the script skips
// elsewhere.
func sigBlock() {
	fmt.Fprintln(os.Stderr, "sigblock: needs Linux")
	os.Exit(2)
}
