//go:build unix && !linux

package multi_test

import (
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
)

// watchDeaths needs pidfds: elsewhere the tail benchmark is skipped.
func watchDeaths(b *testing.B, c *multi.Cluster) <-chan time.Time {
	b.Skip("needs pidfds (Linux)")
	return nil
}
