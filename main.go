// Command multi starts named nodes (worker processes) in the background and
// stops them again without ever signalling the wrong process. See README.md
// and "multi help".
//
// The command line is package internal/cli; the work is in the packages
// multi, nodes and waiter.
package main

import (
	"os"

	// First: a node's exec step runs from its init and never returns.
	_ "github.com/multi-launcher/multi/internal/step"

	"github.com/multi-launcher/multi/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args, os.Stdout, os.Stderr))
}
