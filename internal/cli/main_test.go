package cli

import (
	"os"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
)

// TestMain removes the empty cgroup folders the tests' nodes left.
func TestMain(m *testing.M) {
	sweep := testutil.SweepCgroups()
	code := m.Run()
	sweep()
	os.Exit(code)
}
